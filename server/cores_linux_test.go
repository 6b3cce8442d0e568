package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestCoresConflictAllNamed: the conflict check counts every core a job
// names, not only the first worker-count ones, both ways: a one-worker job
// asking "A,B" is refused while another job holds B, and a job holding
// "A,B" with one worker keeps B from the next.
func TestCoresConflictAllNamed(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	if err != nil || len(allowed) < 2 {
		testbed.Skip(t, "needs 2 CPUs this process may use (has %v, %v)", allowed, err)
	}
	a, b := strconv.Itoa(allowed[0]), strconv.Itoa(allowed[1])
	ts := newTest(t, Options{})
	conflict := func(body string, holder int64, core string) {
		t.Helper()
		code, data := ts.do("POST", "/api/v1/jobs", body)
		var eb ErrorBody
		if code != http.StatusConflict || json.Unmarshal(data, &eb) != nil || eb.Job != holder || !strings.Contains(eb.Error, "cores "+core+" are held by running job "+strconv.FormatInt(holder, 10)) {
			t.Errorf("%s while job %d holds %s: %d %s; want 409", body, holder, core, code, data)
		}
	}
	j := ts.create(`{"rate": "100pps", "cores": "` + b + `"}`)
	conflict(`{"rate": "100pps", "workers": 1, "cores": "`+a+`,`+b+`"}`, j.ID, b)
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", j.ID), nil)
	ts.wait(j.ID)

	k := ts.create(`{"rate": "100pps", "workers": 1, "cores": "` + a + `,` + b + `"}`)
	if k.Cores != a+","+b && k.Cores != a+"-"+b {
		t.Errorf("a job naming cores %s,%s holds %q", a, b, k.Cores)
	}
	conflict(`{"rate": "100pps", "cores": "`+b+`"}`, k.ID, b)
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", k.ID), nil)
	ts.wait(k.ID)
}
