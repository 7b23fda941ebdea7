package flite

import "github.com/narrator/narrator/internal/ascii"

// Clean prepares text for flite, which reads bytes as Latin text: control characters, newlines
// among them, become spaces; common typographic characters are folded to ASCII (curly quotes,
// dashes, accented Latin letters); any other non-ASCII character becomes a space.
func Clean(text string) string { return ascii.Fold(text) }
