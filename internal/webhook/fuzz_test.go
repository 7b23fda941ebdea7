package webhook_test

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/narrator/narrator/internal/webhook"
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
		err := webhook.CheckAddress(address)
		if err != nil {
			if !errors.Is(err, webhook.ErrRefused) {
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
