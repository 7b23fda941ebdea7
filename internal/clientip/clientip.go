// Package clientip tells who the client of a request is, for the limits
// that count per client: the sign-in limits and the connection and request
// limits of the HTTP edge.
package clientip

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds the client's address of a request. Forwarding headers are
// trusted only from the proxies it was given.
type Resolver struct {
	trusted []netip.Prefix
}

// New returns a Resolver that trusts the X-Forwarded-For header of peers
// in trusted, and no other.
func New(trusted []netip.Prefix) *Resolver {
	return &Resolver{trusted: trusted}
}

// Addr is the address of the client of r. From a trusted peer,
// X-Forwarded-For is read from the right, past the trusted hops, and the
// first address not trusted is the client's. Anything left of it was
// written by the client and is ignored. From any other peer, the peer's
// address is the client's.
func (c *Resolver) Addr(r *http.Request) string {
	host := Host(r.RemoteAddr)
	if !c.Trusted(host) {
		return host
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			hop := strings.TrimSpace(parts[j])
			if hop == "" {
				continue
			}
			if !c.Trusted(hop) {
				return hop
			}
			host = hop
		}
	}
	return host
}

// Key is the name under which the limits count the client of r: the Key
// of its Addr.
func (c *Resolver) Key(r *http.Request) string { return Key(c.Addr(r)) }

// Trusted reports whether addr is the address of a trusted proxy.
func (c *Resolver) Trusted(addr string) bool {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range c.trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Host returns the host of a host:port address such as
// http.Request.RemoteAddr, or addr itself when it has no port.
func Host(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// Key names a client address for the limits: an IPv4 address is itself,
// but an IPv6 address stands for its /64, because one host, or one
// subscriber of a provider, usually has a whole /64 and could otherwise
// take a fresh address for every attempt. Text that is not an address is
// returned unchanged.
func Key(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}
