package ascii_test

import (
	"testing"

	"github.com/narrator/narrator/internal/ascii"
)

func TestFold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"ascii kept", `plain "text" \ 1-2`, `plain "text" \ 1-2`},
		{"controls", "two\nlines\t\x7f", "two lines  "},
		{"accents", "café naïve Łódź ÆSOP", "cafe naive Lodz AESOP"},
		{"central european", "Dvořák ještě Erdős Űrhajó", "Dvorak jeste Erdos Urhajo"},
		{"romanian and turkish", "București Şiş Erdoğan İzmir", "Bucuresti Sis Erdogan Izmir"},
		{"letters that do not decompose", "Ørsted łódź Straße Æbelø Đorđe þorn", "Orsted lodz Strasse AEbelo Dorde thorn"},
		{"decomposed input", "e\u0301te\u0301", "ete"},
		{"ligature", "ﬁne", "fine"},
		{"quotes", "“q” ‘s’ «g»", `"q" 's' "g"`},
		{"dashes", "a—b a‐b", "a, b a-b"},
		{"ellipsis", "so…", "so..."},
		{"symbols", "5€ 3°", "5 euros  3 degrees "},
		{"other", "日本", "  "},
		{"greek", "αβ", "  "},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ascii.Fold(tt.in); got != tt.want {
				t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
