// Package openapi holds the OpenAPI 3.1 document of the v3 API, its
// extensions and the service's other public endpoints, and serves it.
//
// The document, openapi.json, is written by hand and embedded in the
// binary. Its schemas are strict where the specification is (required
// fields, no unknown fields in answers), so that the tests which check
// every golden answer and every answer of a real server against it can
// fail. The error schema is generic (an integer code and a message), so
// that new error codes still conform.
package openapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"time"
)

//go:embed openapi.json
var document []byte

// Document returns a copy of the OpenAPI document, as JSON.
func Document() []byte { return bytes.Clone(document) }

// Handler serves the document as application/json, with a strong ETag so
// that caches may keep it and revalidate it cheaply.
type Handler struct {
	etag string
}

// NewHandler returns the document's handler.
func NewHandler() *Handler {
	sum := sha256.Sum256(document)
	return &Handler{etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

// ServeHTTP implements http.Handler. It answers GET and HEAD, conditional
// requests included; the router decides what other methods get.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("ETag", h.etag)
	w.Header().Set("Access-Control-Allow-Origin", "*")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(document))
}
