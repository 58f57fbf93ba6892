package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The restore handler's answers: the zxid on success, 400 for a bad
// body, 413 past the size bound, 500 for a failure of the server, 429
// when rate limited, 405 for anything but POST.
func TestRestoreHandler(t *testing.T) {
	now := time.Unix(1000, 0)
	var got []byte
	h := RestoreHandler(RestoreConfig{
		Restore: func(_ context.Context, r io.Reader) (int64, error) {
			b, err := io.ReadAll(r)
			if err != nil {
				return 0, err
			}
			got = b
			switch string(b) {
			case "garbage":
				return 0, fmt.Errorf("%w: magic", ErrBadRestore)
			case "huge":
				return 0, ErrRestoreTooLarge
			case "fail":
				return 0, errors.New("disk on fire")
			}
			return 0x42, nil
		},
		Interval: time.Minute,
		MaxBytes: 16,
		Now:      func() time.Time { return now },
	})
	post := func(body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/commands/restore", strings.NewReader(body)))
		return rec.Code, rec.Body.String()
	}
	step := func() { now = now.Add(time.Minute) }

	if code, body := post("snapshot-bytes"); code != 200 || !strings.Contains(body, `"last_zxid": 66`) ||
		!strings.Contains(body, `"error": null`) || !bytes.Equal(got, []byte("snapshot-bytes")) {
		t.Errorf("ok: %d %s", code, body)
	}
	if code, body := post("snapshot-bytes"); code != http.StatusTooManyRequests {
		t.Errorf("rate limited: %d %s", code, body)
	}
	for body, want := range map[string]int{
		"garbage":                 400,
		"huge":                    413,
		"fail":                    500,
		"more than sixteen bytes": 413,
	} {
		step()
		if code, resp := post(body); code != want || !strings.Contains(resp, `"command": "restore"`) || strings.Contains(resp, `"error": null`) {
			t.Errorf("%q: %d %s, want %d with an error", body, code, resp, want)
		}
	}
	step()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/commands/restore", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rec.Code)
	}
}
