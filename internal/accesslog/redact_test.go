package accesslog

import "testing"

func TestRedactQuery(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"", ""},
		{"page=2&limit=5", "page=2&limit=5"},
		{"limit=5&api_key=k&token=t", "limit=5&api_key=REDACTED&token=REDACTED"},
		{"api%5Fkey=k&x=%20y", "api%5Fkey=REDACTED&x=%20y"},
		{"API_KEY=k", "API_KEY=REDACTED"},
		{"flag&password=p&", "flag&password=REDACTED&"},
		{"a=1;api_key=k", "UNPARSED"},
		{"%zz=1&api_key=k", "UNPARSED"},
	} {
		if got := redactQuery(tt.raw); got != tt.want {
			t.Errorf("redactQuery(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestNewIDsDiffer(t *testing.T) {
	a, b := newID(), newID()
	if a == b || len(a) != 32 || a[:16] != b[:16] {
		t.Errorf("newID gave %q then %q: want 32 hex digits, one prefix, different IDs", a, b)
	}
}
