package proc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/proc"
)

func TestLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		unit, perChar time.Duration
		text          string
		want          time.Duration
	}{
		{"defaults", 0, 0, "abc", 5*time.Second + 600*time.Millisecond},
		{"negative means default", -1, -1, "", 5 * time.Second},
		{"set", time.Second, time.Millisecond, "héllo", time.Second + 6*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := proc.Limit(tt.unit, tt.perChar, tt.text); got != tt.want {
				t.Errorf("Limit(%s, %s, %q) = %s, want %s", tt.unit, tt.perChar, tt.text, got, tt.want)
			}
		})
	}
}

func TestAbbrev(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"short", "Hello.", "Hello."},
		{"sixty", strings.Repeat("é", 60), strings.Repeat("é", 60)},
		{"long", strings.Repeat("é", 61), strings.Repeat("é", 57) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := proc.Abbrev(tt.in); got != tt.want {
				t.Errorf("Abbrev(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// noise is a Tail.SkipFunc that leaves out warnings.
func noise(line string) bool { return strings.HasPrefix(line, "WARN: ") }

func TestTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		size       int
		writes     []string
		skip       func(line string) bool
		wantString string
		wantSuffix string
	}{
		{"empty", 0, nil, nil, "", ""},
		{"blank", 0, []string{" \n\t"}, nil, " \n\t", ""},
		{"kept", 0, []string{"oops\n"}, nil, "oops\n", "; stderr: oops"},
		{"last bytes", 4, []string{"abc", "def"}, nil, "cdef", "; stderr: cdef"},
		{"one long write", 3, []string{"abcdef"}, nil, "def", "; stderr: def"},
		{"default size", 0, []string{strings.Repeat("x", 2000)}, nil, strings.Repeat("x", 1024), "; stderr: " + strings.Repeat("x", 1024)},
		{"invalid utf-8", 0, []string{"a\xffb"}, nil, "a\xffb", "; stderr: a?b"},
		{"skipped lines", 0, []string{"WARN: noise\r\nfirst\nWARN: no", "ise\nlast"}, noise, "WARN: noise\r\nfirst\nWARN: noise\nlast", "; stderr: first\nlast"},
		{"only skipped lines", 0, []string{"WARN: noise\n"}, noise, "WARN: noise\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tail := &proc.Tail{Size: tt.size, SkipFunc: tt.skip}
			for _, w := range tt.writes {
				if n, err := tail.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := tail.String(); got != tt.wantString {
				t.Errorf("String() = %q, want %q", got, tt.wantString)
			}
			if got := tail.Suffix(); got != tt.wantSuffix {
				t.Errorf("Suffix() = %q, want %q", got, tt.wantSuffix)
			}
			tail.Reset()
			if got := tail.Suffix(); got != "" {
				t.Errorf("after Reset: Suffix() = %q, want empty", got)
			}
		})
	}
}
