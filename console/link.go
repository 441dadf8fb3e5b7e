package console

import (
	"encoding/base64"
	"net/http"

	"github.com/skip2/go-qrcode"
)

// newLink makes a one-time link for another device (a phone): the page
// shows it with its QR code. The link is the address this page was reached
// at, so a phone must reach it too (loopback does not: see --addr).
func (s *Server) newLink(w http.ResponseWriter, r *http.Request) {
	link := s.Link("http://" + r.Host)
	png, err := qrcode.Encode(link, qrcode.Medium, 256)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"ok": false, "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "url": link, "qr": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)})
}

// TerminalQR draws text as a QR code with half-block characters (two rows
// of modules per line), for a terminal that shows Unicode.
func TerminalQR(text string) (string, error) {
	q, err := qrcode.New(text, qrcode.Low)
	if err != nil {
		return "", err
	}
	return q.ToSmallString(false), nil
}
