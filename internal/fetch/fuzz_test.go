package fetch

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// FuzzCheckAddress reads any string as a dialled address. Only a public
// unicast IP with a port passes; everything else is refused with
// ErrRefused.
func FuzzCheckAddress(f *testing.F) {
	for _, s := range []string{
		"93.184.216.34:443", "[2606:2800:220:1::1]:80", "127.0.0.1:80", "[::ffff:10.0.0.1]:443", "[fe80::1%eth0]:80",
		"100.64.0.1:80", "0.0.0.0:0", "[::]:1", "example.com:80", "1.2.3.4", "", ":80", "[::1]", "224.0.0.1:5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, address string) {
		err := CheckAddress(address)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("CheckAddress(%q) = %v, not ErrRefused", address, err)
			}
			return
		}
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			t.Fatalf("CheckAddress(%q) passed an address without a port", address)
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			t.Fatalf("CheckAddress(%q) passed a host that is not an IP", address)
		}
		ip = ip.Unmap()
		if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() {
			t.Fatalf("CheckAddress(%q) passed %v", address, ip)
		}
	})
}

// FuzzParseRobots reads any robots.txt. Parsing never fails; /robots.txt
// is always allowed; a file without Disallow lines allows every path; and
// a path is judged the same however often it is asked.
func FuzzParseRobots(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /private\nAllow: /private/open\n", "/private/x")
	f.Add("user-agent: narrator\ndisallow: /*.pdf$\n\nuser-agent: *\ndisallow: /\n", "/a.pdf")
	f.Add("Disallow: /\n", "/")
	f.Add("User-agent: Narrator/1.0\nUser-agent: other\nDisallow: /x*y$\n", "/x1y")
	f.Fuzz(func(t *testing.T, data, path string) {
		r := ParseRobots([]byte(data), RobotsAgent)
		if !r.Allowed("/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		got := r.Allowed(path)
		if got != r.Allowed(path) {
			t.Fatal("Allowed is not deterministic")
		}
		if !strings.Contains(strings.ToLower(data), "disallow") && !got {
			t.Fatalf("%q disallowed by a file without Disallow", path)
		}
	})
}
