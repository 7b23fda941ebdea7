package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// SelfHeader is the response header every answer of a Narrator server
// carries (Self.Mark). Its value names the installation, the same on every
// node of a cluster, and nothing else.
const SelfHeader = "Narrator-Instance"

// ErrSelf is matched (errors.Is) by the error of a request that would
// reach, or reached, the Narrator server its client runs in.
var ErrSelf = errors.New("the server's own address")

// Self is the Narrator server a client runs in (Options.Self). A client
// with a Self never reads the server's own answers, whatever name or
// address the URL gives it:
//   - it refuses to dial an address the server listens on (Listening),
//     checked on the address dialled, after name resolution, as the
//     address check is, AllowPrivate or not;
//   - it refuses an answer that carries the server's SelfHeader, for a
//     server reached through a proxy or a translated address.
//
// It is safe for concurrent use.
type Self struct {
	id string

	mu    sync.Mutex
	addrs []netip.AddrPort
	// local returns the machine's own addresses, which a listener on an
	// unspecified address (0.0.0.0, ::) answers on; net.InterfaceAddrs
	// but in tests.
	local func() ([]net.Addr, error)
}

// NewSelf returns the Self of the installation whose public URL is
// publicURL: the nodes of a cluster, which share it, recognise each
// other's answers.
func NewSelf(publicURL string) *Self {
	sum := sha256.Sum256([]byte("narrator instance\x00" + publicURL))
	return &Self{id: hex.EncodeToString(sum[:16]), local: net.InterfaceAddrs}
}

// Listening records an address the server listens on, a listener's Addr.
func (s *Self) Listening(addr net.Addr) {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return
	}
	s.mu.Lock()
	s.addrs = append(s.addrs, netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port()))
	s.mu.Unlock()
}

// Mark returns next with SelfHeader set on every answer.
func (s *Self) Mark(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(SelfHeader, s.id)
		next.ServeHTTP(w, r)
	})
}

// answered reports whether h, a response's header, is one of the
// server's own answers.
func (s *Self) answered(h http.Header) bool {
	return s != nil && h.Get(SelfHeader) == s.id
}

// owns reports whether address, an IP:port as a dialer gets it, is one
// the server listens on.
func (s *Self) owns(address string) bool {
	if s == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap().WithZone("")
	s.mu.Lock()
	addrs := s.addrs
	s.mu.Unlock()
	for _, own := range addrs {
		if own.Port() != ap.Port() {
			continue
		}
		if own.Addr() == ip {
			return true
		}
		// A listener on every address answers on any of the
		// machine's: loopback, the unspecified address itself, and
		// each interface's.
		if own.Addr().IsUnspecified() && (ip.IsLoopback() || ip.IsUnspecified() || s.isLocal(ip)) {
			return true
		}
	}
	return false
}

// isLocal reports whether ip is an address of one of the machine's
// interfaces.
func (s *Self) isLocal(ip netip.Addr) bool {
	addrs, err := s.local()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap().WithZone("") == ip {
			return true
		}
	}
	return false
}

// selfError is the error of a dial to the server's own address.
type selfError struct{}

func (selfError) Error() string {
	return "the address is Narrator's own; Narrator does not read its own answers"
}

func (selfError) Is(target error) bool { return target == ErrSelf }
