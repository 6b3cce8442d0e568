package sysinfo

import (
	"reflect"
	"testing"
)

func TestIfaceCPUs(t *testing.T) {
	f := FS{Root: "testdata/numa2"}
	if got := f.IfaceCPUs("ens3"); !reflect.DeepEqual(got, []int{2, 3, 6, 7}) {
		t.Fatalf("ens3 on node 1: got %v", got)
	}
	if got := f.IfaceCPUs("veth0"); got != nil {
		t.Fatalf("an interface without a node: got %v, want nil", got)
	}
}
