package fetch

import (
	"errors"
	"testing"
)

func TestCheckAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		kind string // "" for a public address
	}{
		{"93.184.216.34:443", ""},
		{"[2606:2800:220:1:248:1893:25c8:1946]:443", ""},
		{"8.8.8.8:80", ""},
		{"127.0.0.1:80", "loopback"},
		{"127.1.2.3:80", "loopback"},
		{"[::1]:80", "loopback"},
		{"10.1.2.3:80", "private"},
		{"172.16.0.1:80", "private"},
		{"172.31.255.255:80", "private"},
		{"192.168.1.1:80", "private"},
		{"169.254.169.254:80", "link-local"},
		{"[fe80::1]:80", "link-local"},
		{"[fe80::1%eth0]:80", "link-local"},
		{"0.0.0.0:80", "unspecified"},
		{"[::]:80", "unspecified"},
		{"224.0.0.1:80", "multicast"},
		{"[ff02::1]:80", "multicast"},
		{"100.64.0.1:80", "reserved"},
		{"100.127.255.254:80", "reserved"},
		{"[fd00::1]:80", "private"},
		{"[fc00::1]:80", "private"},
		{"[::ffff:127.0.0.1]:80", "loopback"},
		{"[::ffff:10.0.0.1]:80", "private"},
		{"[64:ff9b::a00:1]:80", "reserved"},
		{"255.255.255.255:80", "reserved"},
		{"198.18.0.1:80", "reserved"},
		{"192.0.2.1:80", "reserved"},
		{"[2001:db8::1]:80", "reserved"},
		{"example.com:80", "not an IP address"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			err := CheckAddress(tc.addr)
			if tc.kind == "" {
				if err != nil {
					t.Errorf("CheckAddress(%s) = %v, want nil", tc.addr, err)
				}
				return
			}
			var ae *AddressError
			if !errors.As(err, &ae) || !errors.Is(err, ErrRefused) || ae.Kind != tc.kind {
				t.Errorf("CheckAddress(%s) = %v; want a refusal of kind %q", tc.addr, err, tc.kind)
			}
		})
	}
}

func TestAddressErrorReads(t *testing.T) {
	t.Parallel()
	err := CheckAddress("10.0.0.5:443")
	// The address is not named: a host name may resolve to it inside
	// the server's network.
	if want := "the site's address is private; Narrator does not fetch private addresses"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}
