package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// ErrRefused is matched (errors.Is) by the error of a connection to an
// address the fetcher must not reach.
var ErrRefused = errors.New("address refused")

// AddressError is the error of a connection refused because of where it
// would go. Its text is safe to show to a user: it says what kind of
// address was refused, never which.
type AddressError struct {
	// Addr is the address dialled, after name resolution; invalid when the
	// dialled string was not an IP address.
	Addr netip.Addr
	// Kind says what the address is: "loopback", "private", "link-local",
	// "unspecified", "multicast" or "reserved"; "not an IP address" when
	// Addr is invalid.
	Kind string
}

// Error implements error.
func (e *AddressError) Error() string {
	if !e.Addr.IsValid() {
		return "the address dialled is not an IP address; Narrator dials only public IP addresses"
	}
	// Addr is not named: it may be what a host name resolved to inside
	// the server's network, which the user has no business knowing.
	return fmt.Sprintf("the site's address is %s; Narrator does not fetch %s addresses", e.Kind, e.Kind)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *AddressError) Is(target error) bool { return target == ErrRefused }

// reservedPrefixes are the ranges never reached besides those the netip
// predicates name: shared (CGNAT) space, "this network", IETF protocol
// assignments, documentation, benchmarking, reserved and broadcast, and
// NAT64, which maps onto IPv4 addresses of any kind.
var reservedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// classify returns what kind of address ip is, or "" for a public
// unicast address.
func classify(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, p := range reservedPrefixes {
		if p.Contains(ip) {
			return "reserved"
		}
	}
	return ""
}

// CheckAddress returns an *AddressError (which matches ErrRefused) unless
// address, an IP:port as a dialer gets it after name resolution, is a
// public unicast address: not loopback, private (IPv4 RFC 1918 or IPv6
// unique local), link-local, unspecified, multicast, shared (CGNAT) or
// reserved.
func CheckAddress(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &AddressError{Kind: "not an IP address"}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &AddressError{Kind: "not an IP address"}
	}
	if kind := classify(ip); kind != "" {
		return &AddressError{Addr: ip.Unmap().WithZone(""), Kind: kind}
	}
	return nil
}
