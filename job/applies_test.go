package job

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
)

// Every option name the applies-only-to rule checks is a JSON field of the
// Spec (the send side) and, for backend-specific ones, of the Spec or the
// RecvSpec: a misspelt name would never be "given" and never refused.
func TestAppliesNamesAreFields(t *testing.T) {
	has := func(v any, field string) bool {
		for _, f := range jsonFields(v) {
			if f == field {
				return true
			}
		}
		return false
	}
	for _, list := range [][]string{payloadFields, packetFields, pacedFields, txRingFields} {
		for _, f := range list {
			if !has(Spec{}, f) {
				t.Errorf("%q is not a field of Spec", f)
			}
		}
	}
	for _, f := range backend.SpecificOptions() {
		if !has(Spec{}, f) && !has(RecvSpec{}, f) {
			t.Errorf("%q is a field of neither Spec nor RecvSpec", f)
		}
	}
	one := 1
	if !given(Spec{Queue: &one}, "queue") || given(Spec{}, "queue") || !given(RecvSpec{BusyWait: true}, "busy_wait") || given(Spec{}, "no_such_field") {
		t.Fatal("given does not follow the zero value")
	}
}

// jsonFields lists the JSON names of v's fields.
func jsonFields(v any) []string {
	var out []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}
