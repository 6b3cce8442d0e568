package suggest_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/internal/suggest"
)

func ExampleClosest() {
	flags := []string{"interface", "rate", "count", "duration"}
	fmt.Printf("%q %q %q\n", suggest.Closest("intreface", flags), suggest.Closest("Rtae", flags), suggest.Closest("speed", flags))
	// Output: "interface" "rate" ""
}
