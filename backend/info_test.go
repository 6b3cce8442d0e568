package backend

import "testing"

func TestInfoWithDetails(t *testing.T) {
	kept := Info{Backend: "x", Details: map[string]string{"batch": "64"}}
	i := kept.WithDetails(1)
	i.Details["kicks"] = "3"
	if i.Backend != "x" || i.Details["batch"] != "64" || i.Details["kicks"] != "3" {
		t.Fatalf("copy %+v", i)
	}
	if _, ok := kept.Details["kicks"]; ok || len(kept.Details) != 1 {
		t.Fatalf("the kept Info changed: %+v", kept.Details)
	}
	if i = (Info{}).WithDetails(2); i.Details == nil {
		t.Fatal("no Details map for an Info without one")
	}
}
