package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/job"
)

// TestAutoPinNotEnoughCPUs: an auto_pin job with more workers than CPUs
// free is a 409 that says how many it needs, how many are free and who
// holds the rest; it said "cores  are held by running job 0" when no job
// ran and the host simply had fewer CPUs than workers.
func TestAutoPinNotEnoughCPUs(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	if err != nil || len(allowed) == 0 || len(allowed) >= 256 {
		t.Skip("allowed CPUs unknown, or too many for a worker count above them")
	}
	ts := newTest(t, Options{})
	n := len(allowed)
	code, data := ts.do("POST", "/api/v1/jobs", fmt.Sprintf(`{"rate": "1kpps", "auto_pin": true, "workers": %d, "count": 10}`, n+1))
	var body ErrorBody
	want := fmt.Sprintf("auto_pin: %d workers need %d CPUs, and this server may use %d (%s): give workers %d or fewer", n+1, n+1, n, job.FormatCPUList(allowed), n)
	if code != http.StatusConflict || json.Unmarshal(data, &body) != nil || body.Error != want || body.Job != 0 {
		t.Errorf("more workers than CPUs: %d %s; want 409 %q and no job", code, data, want)
	}
	a := ts.create(`{"rate": "1kpps", "cores": "` + strconv.Itoa(allowed[0]) + `"}`)
	defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", a.ID), nil)
	code, data = ts.do("POST", "/api/v1/jobs", fmt.Sprintf(`{"rate": "1kpps", "auto_pin": true, "workers": %d, "count": 10}`, n))
	body = ErrorBody{}
	id := strconv.FormatInt(a.ID, 10)
	if code != http.StatusConflict || json.Unmarshal(data, &body) != nil || body.Job != a.ID ||
		!strings.Contains(body.Error, fmt.Sprintf("auto_pin: %d workers need %d CPUs no running job holds, and %d are free", n, n, n-1)) ||
		!strings.Contains(body.Error, "cores "+strconv.Itoa(allowed[0])+" are held by running job "+id) ||
		!strings.Contains(body.Error, fmt.Sprintf("give workers %d or fewer, or stop job %s first", n-1, id)) {
		t.Errorf("CPUs held: %d %s", code, data)
	}
}
