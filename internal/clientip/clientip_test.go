package clientip_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/narrator/narrator/internal/clientip"
)

func TestKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, addr, want string }{
		{"IPv4", "192.0.2.7", "192.0.2.7"},
		{"IPv4-mapped", "::ffff:192.0.2.7", "192.0.2.7"},
		{"IPv6", "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"IPv6 same /64", "2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
		{"IPv6 with zone", "fe80::1%eth0", "fe80::/64"},
		{"not an address", "example", "example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := clientip.Key(tt.addr); got != tt.want {
				t.Errorf("Key(%q) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}

func TestAddr(t *testing.T) {
	t.Parallel()
	c := clientip.New([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	tests := []struct{ name, remote, xff, want string }{
		{"direct", "192.0.2.1:5000", "", "192.0.2.1"},
		{"untrusted peer's header ignored", "192.0.2.1:5000", "198.51.100.9", "192.0.2.1"},
		{"trusted proxy", "10.0.0.2:5000", "198.51.100.9", "198.51.100.9"},
		{"spoofed left hop ignored", "10.0.0.2:5000", "203.0.113.5, 198.51.100.9", "198.51.100.9"},
		{"trusted hops skipped", "10.0.0.2:5000", "198.51.100.9, 10.0.0.3", "198.51.100.9"},
		{"IPv6 peer", "[2001:db8::1]:5000", "", "2001:db8::1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := http.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			if got := c.Addr(r); got != tt.want {
				t.Errorf("Addr = %q, want %q", got, tt.want)
			}
		})
	}
}
