package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/wpg-dev/wpg/report"
)

// TestSegmentField: the API takes job.Spec's segment, sends the
// segment's share and reports it; a bad segment is the segment field's
// problem.
func TestSegmentField(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"count": 3000, "segment": "1/3"}`)
	if end := ts.wait(v.ID); end.Frames != 1000 {
		t.Errorf("segment 1/3 of 3000 frames sent %d", end.Frames)
	}
	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", v.ID), nil)
	var rep report.Report
	if code != http.StatusOK || json.Unmarshal(data, &rep) != nil || rep.Segment != "1/3" || rep.Job == "" {
		t.Errorf("report: %d, segment %q, job %q", code, rep.Segment, rep.Job)
	}
	code, data = ts.do("POST", "/api/v1/jobs", `{"segment": "3/3"}`)
	var body ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(data, &body) != nil || len(body.Errors) == 0 || body.Errors[0].Field != "segment" || body.Errors[0].Fix == "" {
		t.Errorf("segment 3/3: %d %s", code, data)
	}
}
