package html_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/wpg-dev/wpg/report/html"
)

// Render a send report (wpg send --json) as a page to hand over.
func ExampleRender() {
	doc, err := os.ReadFile("testdata/send.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	var page bytes.Buffer
	if err := html.Render(&page, doc); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Contains(page.String(), `<table id="streams">`), strings.Count(page.String(), "<svg"))
	// Output: true 4
}
