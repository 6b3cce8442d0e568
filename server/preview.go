package server

import (
	"context"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/template"
)

// PreviewRequest is the body of POST /api/v1/preview.
type PreviewRequest struct {
	// Template is the text of a *.wpg.yaml template ("": the embedded
	// default).
	Template string `json:"template"`
	// Frames is how many frames to show (0: 4), capped at
	// server.preview_max.
	Frames int `json:"frames"`
}

// PreviewFrame is one frame of a preview, with its bytes in hex.
type PreviewFrame struct {
	template.PreviewFrame
	Hex string `json:"hex"`
}

// PreviewResponse is the answer of POST /api/v1/preview.
type PreviewResponse struct {
	Template  string         `json:"template"`
	Requested int            `json:"requested"`
	Limit     int            `json:"limit"`
	Capped    bool           `json:"capped"`
	Frames    []PreviewFrame `json:"frames"`
	// Ended is true when the template ran out of frames before Requested.
	Ended bool `json:"ended"`
}

func (s *Server) handlePreview(w http.ResponseWriter, r *http.Request) {
	var req PreviewRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.Frames < 0 {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Field: "frames", Value: strconv.Itoa(req.Frames), Reason: "is negative", Fix: "give a number of frames from 1 (0: 4)"}}})
		return
	}
	if req.Frames == 0 {
		req.Frames = 4
	}
	resp := PreviewResponse{Requested: req.Frames, Limit: s.opt.PreviewMax, Frames: []PreviewFrame{}}
	n := req.Frames
	if n > s.opt.PreviewMax {
		n, resp.Capped = s.opt.PreviewMax, true
	}
	spec, frames, code, eb := s.preview(r.Context(), req.Template, n)
	if code != http.StatusOK {
		if code == http.StatusTooManyRequests {
			s.parsesBusy().retryAfter(w)
		}
		writeJSON(w, code, eb)
		return
	}
	resp.Template = spec.File
	for _, f := range frames {
		resp.Frames = append(resp.Frames, PreviewFrame{PreviewFrame: f, Hex: hex.EncodeToString(f.Bytes)})
	}
	resp.Ended = len(frames) < n
	writeJSON(w, http.StatusOK, resp)
}

// preview parses text (blank: the embedded default) and makes its first n
// frames, for the API's preview and the new-job page's, in a parse turn;
// a status other than 200 comes with the problems: 400 for the
// template's, 429 when no turn came free.
func (s *Server) preview(ctx context.Context, text string, n int) (*template.Spec, []template.PreviewFrame, int, ErrorBody) {
	release, ok := s.parseSlot(ctx)
	if !ok {
		return nil, nil, http.StatusTooManyRequests, s.parsesBusy().body()
	}
	defer release()
	spec := template.Default()
	if strings.TrimSpace(text) != "" {
		var err error
		if spec, err = template.Parse("template", []byte(text)); err != nil {
			return nil, nil, http.StatusBadRequest, templateErrors(err)
		}
	}
	if ps := s.checkReplays(spec); ps != nil {
		return nil, nil, http.StatusBadRequest, problemsBody(ps)
	}
	frames, err := template.Preview(spec, n)
	if err != nil {
		return nil, nil, http.StatusBadRequest, templateErrors(err)
	}
	return spec, frames, http.StatusOK, ErrorBody{}
}
