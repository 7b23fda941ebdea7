// Package clientlimit keeps one client, or a crowd of slow ones, from
// wearing the HTTP edge down: it caps the connections open at once, in all
// and per client, without ever blocking Accept; it caps each client's
// requests in flight; and it drops a request body that arrives slower than
// a minimum rate.
package clientlimit

import (
	"net"
	"sync"

	"github.com/narrator/narrator/internal/clientip"
)

// ListenerOptions configure a Listener.
type ListenerOptions struct {
	// Max caps the connections open at once.
	Max int
	// PerClient caps the connections open at once from one client, named
	// by clientip.Key of the peer's address.
	PerClient int
	// Exempt reports whether a peer's address is exempt from PerClient:
	// a trusted reverse proxy, which carries many clients' connections
	// and limits them itself. Nil exempts none.
	Exempt func(host string) bool
	// Spare is how many connections past the caps may wait at once on the
	// Overflow listener, whose server answers the health checks and
	// refuses the rest; one client may have a quarter of them (at least
	// one). Past that, a connection is closed as soon as it is accepted.
	// 0 closes every connection past the caps at once.
	Spare int
}

// Listener is a net.Listener that caps the connections it hands out, in
// all and per client. Accept never waits for a connection to close: one
// past the caps goes to the Overflow listener while it has room, and is
// closed at once otherwise. A client can thus hold no more than its share
// of the server, and the server keeps accepting, so that its health check
// answers even when every slot is taken.
type Listener struct {
	net.Listener
	opts     ListenerOptions
	overflow *overflow // nil without Spare

	mu     sync.Mutex
	open   int
	client map[string]int
}

// NewListener wraps ln.
func NewListener(ln net.Listener, opts ListenerOptions) *Listener {
	l := &Listener{Listener: ln, opts: opts, client: map[string]int{}}
	if opts.Spare > 0 {
		l.overflow = &overflow{
			addr:      ln.Addr(),
			conns:     make(chan net.Conn, opts.Spare),
			room:      make(chan struct{}, opts.Spare),
			done:      make(chan struct{}),
			perClient: max(opts.Spare/4, 1),
			client:    map[string]int{},
		}
	}
	return l
}

// Accept returns the next connection within the caps.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := clientip.Host(c.RemoteAddr().String())
		key := clientip.Key(host)
		if l.opts.Exempt != nil && l.opts.Exempt(host) {
			key = ""
		}
		if l.take(key) {
			return &conn{Conn: c, release: func() { l.release(key) }}, nil
		}
		if l.overflow == nil || !l.overflow.offer(c, clientip.Key(host)) {
			c.Close()
		}
	}
}

// Overflow returns the listener of the connections past the caps, for a
// server that answers them quickly; nil without ListenerOptions.Spare.
// Closing it closes the connections waiting on it.
func (l *Listener) Overflow() net.Listener {
	if l.overflow == nil {
		return nil
	}
	return l.overflow
}

// take counts a new connection of client key ("" for an exempt one), or
// reports false if a cap is reached.
func (l *Listener) take(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.opts.Max || (key != "" && l.client[key] >= l.opts.PerClient) {
		return false
	}
	l.open++
	if key != "" {
		l.client[key]++
	}
	return true
}

func (l *Listener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if key == "" {
		return
	}
	if l.client[key]--; l.client[key] <= 0 {
		delete(l.client, key)
	}
}

// conn releases its slot when closed, once.
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// overflow is a net.Listener fed by a Listener with the connections past
// its caps, at most cap(room) at once, and perClient of one client.
type overflow struct {
	addr      net.Addr
	conns     chan net.Conn
	room      chan struct{} // a token per connection handed out and not closed
	done      chan struct{}
	perClient int

	mu     sync.Mutex
	closed bool
	client map[string]int
}

// offer hands c, of client key, to the overflow listener, or reports
// false if it is full, for all or for the client, or closed.
func (o *overflow) offer(c net.Conn, key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.client[key] >= o.perClient {
		return false
	}
	select {
	case o.room <- struct{}{}:
	default:
		return false
	}
	o.client[key]++
	// conns has room for every token, so this never blocks.
	o.conns <- &conn{Conn: c, release: func() { o.release(key) }}
	return true
}

func (o *overflow) release(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.client[key]--; o.client[key] <= 0 {
		delete(o.client, key)
	}
	<-o.room
}

func (o *overflow) Accept() (net.Conn, error) {
	select {
	case c := <-o.conns:
		return c, nil
	case <-o.done:
		return nil, net.ErrClosed
	}
}

func (o *overflow) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	close(o.done)
	for {
		select {
		case c := <-o.conns:
			c.Close()
		default:
			return nil
		}
	}
}

func (o *overflow) Addr() net.Addr { return o.addr }
