// Package config builds the server's configuration from flags, then the
// environment, then defaults, and validates it before anything opens.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Environment variables that stand in for flags not given.
const (
	EnvData          = "NARRATOR_DATA"
	EnvDatabase      = "NARRATOR_DATABASE"
	EnvMedia         = "NARRATOR_MEDIA"
	EnvMediaBaseURL  = "NARRATOR_MEDIA_BASE_URL"
	EnvAddr          = "NARRATOR_ADDR"
	EnvPublicURL     = "NARRATOR_PUBLIC_URL"
	EnvRole          = "NARRATOR_ROLE"
	EnvJobs          = "NARRATOR_JOBS"
	EnvUnitWorkers   = "NARRATOR_UNIT_WORKERS"
	EnvCacheMB       = "NARRATOR_CACHE_MB"
	EnvRescueAfter   = "NARRATOR_RESCUE_AFTER"
	EnvEngineStandIn = "NARRATOR_ENGINE_STANDIN"
	// EnvONNXRuntime is the onnxruntime library for --onnxruntime.
	EnvONNXRuntime = "NARRATOR_ONNXRUNTIME"
	// EnvNoNeural, set to anything but "" or "0", makes narrator voices setup-default (the
	// quickstart's neural voice step) do nothing.
	EnvNoNeural = "NARRATOR_NO_NEURAL"
	// EnvVoicesURL is the Piper voice repository, or a mirror with its layout, that
	// narrator voices setup-default fetches from (default neural.PiperVoicesURL).
	EnvVoicesURL = "NARRATOR_VOICES_URL"
	// EnvTestONNXFault sets Config.ONNXFault, for tests only.
	EnvTestONNXFault = "NARRATOR_TEST_ONNX_FAULT"
	// EnvWebhooksAllowPrivate is "true" or "1" to set --webhooks-allow-private.
	EnvWebhooksAllowPrivate = "NARRATOR_WEBHOOKS_ALLOW_PRIVATE"
	EnvMetricsAddr          = "NARRATOR_METRICS_ADDR"
	EnvLogFormat            = "NARRATOR_LOG_FORMAT"
	// EnvWebSubHub is the WebSub hub's URL for --websub-hub.
	EnvWebSubHub = "NARRATOR_WEBSUB_HUB"
	// EnvTrustedProxies is a comma-separated list of CIDRs or addresses
	// for --trusted-proxies.
	EnvTrustedProxies = "NARRATOR_TRUSTED_PROXIES"
	// EnvMaxConnections is a number for --max-connections.
	EnvMaxConnections = "NARRATOR_MAX_CONNECTIONS"
	// EnvMaxConnectionsPerClient is a number for --max-connections-per-client.
	EnvMaxConnectionsPerClient = "NARRATOR_MAX_CONNECTIONS_PER_CLIENT"
	// EnvMinTransferRate is a number of bytes per second for --min-transfer-rate.
	EnvMinTransferRate = "NARRATOR_MIN_TRANSFER_RATE"
	// EnvMemoryLimitMB is a number of MiB for --memory-limit-mb.
	EnvMemoryLimitMB = "NARRATOR_MEMORY_LIMIT_MB"
	// The per-account limits and the length cap: see Config.
	EnvMaxQueuedPerAccount  = "NARRATOR_MAX_QUEUED_PER_ACCOUNT"
	EnvMaxMediaMBPerAccount = "NARRATOR_MAX_MEDIA_MB_PER_ACCOUNT"
	EnvMaxAudioDuration     = "NARRATOR_MAX_AUDIO_DURATION"
	EnvMaxSourcesPerAccount = "NARRATOR_MAX_SOURCES_PER_ACCOUNT"
	// EnvMaxFeedsPerAccount is EnvMaxSourcesPerAccount's old name, read
	// when the new one is not set: deprecated.
	EnvMaxFeedsPerAccount = "NARRATOR_MAX_FEEDS_PER_ACCOUNT"
)

// Log formats.
const (
	LogText = "text"
	LogJSON = "json"
)

// EnvSandbox stands in for --sandbox.
const EnvSandbox = "NARRATOR_SANDBOX"

// Values of --sandbox: whether engine processes run in a sandbox (bubblewrap).
const (
	SandboxAuto = "auto" // if the sandbox works here; else unsandboxed, with a warning
	SandboxOn   = "on"   // always; serve fails to start where the sandbox does not work
	SandboxOff  = "off"  // never
)

// Defaults.
const (
	DefaultData = "./narrator-data"
	DefaultAddr = "127.0.0.1:8080"
	// DefaultMaxConnections is how many client connections a node holds
	// open at once unless told otherwise.
	DefaultMaxConnections = 1024
	// DefaultMaxConnectionsPerClient is how many of them one client may
	// hold, and how many requests it may have in flight, at most: with
	// fewer connections in all, a client's share is smaller
	// (PerClientShare).
	DefaultMaxConnectionsPerClient = 64
	// DefaultMinTransferRate is the slowest, in bytes per second, a
	// request body may arrive or a media response be read, after a few
	// seconds' grace. It is well below the bitrate of the MP3s, so that a
	// player that reads as it plays is never cut off.
	DefaultMinTransferRate = 1024
	// DefaultMemoryLimitMB is the Go runtime's soft memory limit of serve.
	// It is a few times the server's own live heap in a long rendering
	// with the real engines; without a limit, the collector lets the heap
	// grow to twice the live heap between collections, and a long
	// rendering meets the worst of it more often (docs/figures.md, "The
	// soft memory limit"; docs/decisions/memory-limit.md).
	DefaultMemoryLimitMB = 24
)

// Database kinds.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Media store kinds.
const (
	File = "file"
	S3   = "s3"
)

// Roles of a server node.
const (
	RoleAll    = "all"    // serves HTTP and works jobs: the embedded default
	RoleAPI    = "api"    // serves the API, dashboard and media; synthesises nothing
	RoleWorker = "worker" // only works jobs (and answers /healthz)
)

// Backends says where a command's data lives.
type Backends struct {
	// DataDir holds what belongs to one node: scratch files, caches and
	// the lock that keeps a second server off them, and by default the
	// SQLite database and the media.
	DataDir string
	// Database is "sqlite:PATH" or a PostgreSQL URL (postgres://...).
	Database string
	// Media is "file:DIR" or "s3://BUCKET/PREFIX?endpoint=...".
	Media string
}

// BackendFlags registers --data, --database and --media on fs, defaulting
// from the environment, and returns a function that completes and
// validates the Backends once fs is parsed.
func BackendFlags(fs *flag.FlagSet, getenv func(string) string) func() (Backends, error) {
	var b Backends
	fs.StringVar(&b.DataDir, "data", orDefault(getenv(EnvData), DefaultData), "data `dir`ectory: scratch files, caches, and the defaults of --database and --media (env "+EnvData+")")
	fs.StringVar(&b.Database, "database", getenv(EnvDatabase), "`database`: sqlite:PATH or postgres://user:pass@host:port/db?sslmode=... (env "+EnvDatabase+"; default sqlite:DATA/narrator.db)")
	fs.StringVar(&b.Media, "media", getenv(EnvMedia), "media `store`: file:DIR or s3://BUCKET/PREFIX?endpoint=URL&region=R&path_style=true, credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (env "+EnvMedia+"; default file:DATA/media)")
	return func() (Backends, error) {
		if b.Database == "" {
			b.Database = SQLite + ":" + filepath.Join(b.DataDir, "narrator.db")
		}
		if b.Media == "" {
			b.Media = File + ":" + filepath.Join(b.DataDir, "media")
		}
		return b, b.Validate()
	}
}

// Validate reports the first problem with b, naming its flag.
func (b *Backends) Validate() error {
	if b.DataDir == "" {
		return errors.New("--data must not be empty")
	}
	if _, _, err := ParseDatabase(b.Database); err != nil {
		return fmt.Errorf("--database: %w", err)
	}
	if _, _, err := ParseMedia(b.Media); err != nil {
		return fmt.Errorf("--media: %w", err)
	}
	return nil
}

// ParseDatabase returns the kind of a database setting (SQLite or Postgres)
// and its target: the file path for SQLite, the URL for PostgreSQL.
func ParseDatabase(s string) (kind, target string, err error) {
	switch {
	case strings.HasPrefix(s, "sqlite:"):
		path := strings.TrimPrefix(s, "sqlite:")
		if path == "" || strings.ContainsAny(path, "?\x00") {
			return "", "", fmt.Errorf("%q: sqlite: needs a file path without '?'", s)
		}
		return SQLite, path, nil
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		if _, err := url.Parse(s); err != nil {
			return "", "", errors.New("the PostgreSQL URL does not parse (is a special character in the password not percent-encoded?)")
		}
		return Postgres, s, nil
	default:
		return "", "", fmt.Errorf("%q must be sqlite:PATH or a postgres:// URL", redact(s))
	}
}

// ParseMedia returns the kind of a media setting (File or S3) and its
// target: the directory for File, the URL for S3 (whose details the s3
// package checks).
func ParseMedia(s string) (kind, target string, err error) {
	switch {
	case strings.HasPrefix(s, "file:"):
		dir := strings.TrimPrefix(s, "file:")
		if dir == "" {
			return "", "", fmt.Errorf("%q: file: needs a directory", s)
		}
		return File, dir, nil
	case strings.HasPrefix(s, "s3://"):
		return S3, s, nil
	default:
		return "", "", fmt.Errorf("%q must be file:DIR or an s3:// URL", s)
	}
}

// Copy is the configuration of `narrator copy-data`: the backends data is
// copied from and to. Their DataDir is unused. It takes nothing from the
// environment, so that a copy never picks a store by accident.
type Copy struct {
	From, To Backends
}

// CopyFlags registers --from-database, --from-media, --to-database and
// --to-media on fs and returns a function that validates the Copy once fs
// is parsed. All four are required.
func CopyFlags(fs *flag.FlagSet) func() (Copy, error) {
	var c Copy
	fs.StringVar(&c.From.Database, "from-database", "", "`database` to copy from: sqlite:PATH or a postgres:// URL (required)")
	fs.StringVar(&c.From.Media, "from-media", "", "media `store` to copy from: file:DIR or an s3:// URL (required)")
	fs.StringVar(&c.To.Database, "to-database", "", "`database` to copy into: sqlite:PATH or a postgres:// URL (required)")
	fs.StringVar(&c.To.Media, "to-media", "", "media `store` to copy into: file:DIR or an s3:// URL (required)")
	return func() (Copy, error) { return c, c.Validate() }
}

// Validate reports the first problem with c, naming its flag.
func (c *Copy) Validate() error {
	settings := []struct {
		flag, value string
		parse       func(string) (string, string, error)
	}{
		{"--from-database", c.From.Database, ParseDatabase},
		{"--from-media", c.From.Media, ParseMedia},
		{"--to-database", c.To.Database, ParseDatabase},
		{"--to-media", c.To.Media, ParseMedia},
	}
	for _, s := range settings {
		if s.value == "" {
			return fmt.Errorf("%s is required", s.flag)
		}
		if _, _, err := s.parse(s.value); err != nil {
			return fmt.Errorf("%s: %w", s.flag, err)
		}
	}
	if c.From.Database == c.To.Database {
		return errors.New("--to-database must not be --from-database")
	}
	if c.From.Media == c.To.Media {
		return errors.New("--to-media must not be --from-media")
	}
	return nil
}

// redact hides the password of a URL-like setting, for error messages.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return s
}

// Config is the configuration of `narrator serve`.
type Config struct {
	Backends
	// Role is what this node does: RoleAll, RoleAPI or RoleWorker.
	Role string
	// Addr is the host:port to listen on.
	Addr string
	// PublicURL is the base of every URL the API hands out, without a
	// trailing slash.
	PublicURL string
	// MediaBaseURL, when set, is where clients fetch media from directly
	// (a public bucket or a CDN in front of it), without a trailing slash;
	// otherwise media are served by the nodes under PublicURL/media/.
	MediaBaseURL string
	// SynthesisJobs is how many audios are synthesised at once.
	SynthesisJobs int
	// UnitWorkers is how many sentences are synthesised at once across all
	// audios' engines; it sizes the engine process pools.
	UnitWorkers int
	// CacheMB bounds the cache of synthesised sentences, in MiB.
	CacheMB int
	// MemoryLimitMB is the Go runtime's soft memory limit, in MiB; 0
	// leaves the runtime's own (GOMEMLIMIT, else none).
	MemoryLimitMB int
	// RescueAfter is how long a job may run before another node may take
	// it over, taking its node for dead; a node that is only slow keeps its
	// work (see jobs.Config.RescueAfter).
	RescueAfter time.Duration
	// ONNXRuntime is the path of the onnxruntime shared library that neural
	// voices (Piper, Kokoro) run on, in worker processes; "" refuses them.
	ONNXRuntime string
	// ONNXFault, for tests only, makes every neural worker crash or hang on
	// purpose ("crash:N" or "hang:N", see worker.ParseFault). It has no flag:
	// only the environment variable EnvTestONNXFault sets it.
	ONNXFault string
	// EngineStandIn, for benchmarks only, replaces every speech engine by a
	// stand-in that waits this long per sentence without using the CPU; the
	// sentence cache is then off. Zero uses the real engines.
	EngineStandIn time.Duration
	// WebhooksAllowPrivate lets webhook deliveries and page imports reach
	// loopback, private, link-local and other internal addresses, which
	// they never do otherwise: for tests, and for receivers and sites
	// inside a trusted network.
	WebhooksAllowPrivate bool
	// WebSubHub, when set, is the URL of the WebSub hub that every podcast
	// feed names (atom:link rel="hub") and that Narrator pings when a feed
	// changes, so that podcast apps subscribed there hear of new episodes
	// at once instead of at their next poll; "" names and pings none.
	WebSubHub string
	// MetricsAddr, when set, is a host:port of its own where /metrics is
	// served, and then only there, with Go's profiles under /debug/pprof/;
	// otherwise /metrics is on Addr, for clients on this machine only
	// (loopback, not forwarded by a proxy), and no profiles are served.
	MetricsAddr string
	// LogFormat is LogText or LogJSON.
	LogFormat string
	// TrustedProxies lists, comma-separated, the CIDRs or addresses of the
	// reverse proxies whose X-Forwarded-For header names the client (see
	// TrustedProxyPrefixes); empty trusts none.
	TrustedProxies string
	// MaxConnections caps the client connections open at once; past it,
	// a connection is answered only if it asks for the health checks, and
	// refused otherwise.
	MaxConnections int
	// MaxConnectionsPerClient caps the connections one client (an IPv4
	// address or an IPv6 /64) holds open at once, and its requests in
	// flight. It is less than MaxConnections, so that one client never
	// takes every connection; ServeFlags sets PerClientShare of it when
	// the flag is 0 or unset. The peers
	// in TrustedProxies are exempt from the connection cap: their clients'
	// requests count.
	MaxConnectionsPerClient int
	// MinTransferRate is the slowest, in bytes per second, a request body
	// may arrive or a media response be read once a few seconds' grace is
	// spent; a slower client is cut off. 0 sets no minimum.
	MinTransferRate int
	// Sandbox says whether engine processes run in a sandbox: SandboxAuto,
	// SandboxOn or SandboxOff.
	Sandbox string
	// MaxQueuedPerAccount bounds each account's audios waiting for or
	// under synthesis; a create beyond it is refused (429). 0 means no
	// limit.
	MaxQueuedPerAccount int
	// MaxMediaMBPerAccount bounds the published media of each account, in
	// MiB; once they fill it, creates are refused (403). 0 means no limit.
	MaxMediaMBPerAccount int64
	// MaxAudioDuration caps the length of one audio, pauses included.
	MaxAudioDuration time.Duration
	// MaxSourcesPerAccount bounds the sources each account's projects
	// read, together; a create beyond it is refused (409). 0 means no
	// limit.
	MaxSourcesPerAccount int
}

// Defaults of the per-account limits and the length cap.
const (
	DefaultMaxQueuedPerAccount  = 1_000
	DefaultMaxMediaMBPerAccount = 10 << 10 // 10 GiB
	DefaultMaxAudioDuration     = 3 * time.Hour
	DefaultMaxSourcesPerAccount = 100
)

// ServeFlags registers the serve flags on fs and returns a function that
// completes and validates the Config once fs is parsed.
//
// Every flag has an environment variable, named in its usage as
// "(env NARRATOR_...)", whose value is the flag's default; a flag given on
// the command line wins. A variable that does not parse is an error that
// names it, and so is one whose value Validate refuses.
func ServeFlags(fs *flag.FlagSet, getenv func(string) string) func() (Config, error) {
	var c Config
	env := &envDefaults{getenv: getenv}
	backends := BackendFlags(fs, getenv)
	fs.StringVar(&c.Role, "role", orDefault(getenv(EnvRole), RoleAll), "what this node does: all, api (HTTP only) or worker (jobs only) (env "+EnvRole+")")
	fs.StringVar(&c.Addr, "addr", orDefault(getenv(EnvAddr), DefaultAddr), "listen `host:port` (env "+EnvAddr+")")
	fs.StringVar(&c.PublicURL, "public-url", getenv(EnvPublicURL), "base `URL` of every URL the API hands out (env "+EnvPublicURL+"; default http://ADDR)")
	fs.StringVar(&c.MediaBaseURL, "media-base-url", getenv(EnvMediaBaseURL), "base `URL` of media URLs, for a public bucket or a CDN (env "+EnvMediaBaseURL+"; default PUBLIC-URL/media)")
	fs.IntVar(&c.SynthesisJobs, "jobs", env.int(EnvJobs, 2), "audios synthesised at once (env "+EnvJobs+")")
	fs.IntVar(&c.UnitWorkers, "unit-workers", env.int(EnvUnitWorkers, runtime.NumCPU()), "sentences synthesised at once (engine processes per engine) (env "+EnvUnitWorkers+")")
	fs.IntVar(&c.CacheMB, "cache-mb", env.int(EnvCacheMB, 2048), "size bound of the cache of synthesised sentences, in `MiB` (0 turns it off) (env "+EnvCacheMB+")")
	fs.IntVar(&c.MemoryLimitMB, "memory-limit-mb", env.int(EnvMemoryLimitMB, DefaultMemoryLimitMB), "soft limit of the Go runtime's memory, in `MiB`, which keeps the peak flat on long articles; 0 leaves Go's own (GOMEMLIMIT) (env "+EnvMemoryLimitMB+")")
	fs.DurationVar(&c.RescueAfter, "rescue-after", env.duration(EnvRescueAfter, 2*time.Minute), "how long a job may run before another node takes it over, taking its node for dead (env "+EnvRescueAfter+")")
	c.ONNXFault = getenv(EnvTestONNXFault)
	fs.StringVar(&c.ONNXRuntime, "onnxruntime", getenv(EnvONNXRuntime), "the onnxruntime shared `library` neural voices run on, such as the one scripts/deps.sh onnxruntime fetches (env "+EnvONNXRuntime+"; without it neural voices are refused)")
	fs.DurationVar(&c.EngineStandIn, "engine-standin", env.duration(EnvEngineStandIn, 0), "for benchmarks only: replace every speech engine by a stand-in that waits this `long` per sentence (turns the sentence cache off) (env "+EnvEngineStandIn+")")
	fs.BoolVar(&c.WebhooksAllowPrivate, "webhooks-allow-private", env.bool(EnvWebhooksAllowPrivate), "let webhook deliveries and page imports reach loopback, private and link-local addresses (env "+EnvWebhooksAllowPrivate+")")
	fs.StringVar(&c.WebSubHub, "websub-hub", getenv(EnvWebSubHub), "`URL` of a WebSub hub that podcast feeds name and Narrator pings when they change, such as https://pubsubhubbub.appspot.com/ (env "+EnvWebSubHub+"; default none)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", getenv(EnvMetricsAddr), "serve /metrics, and Go's profiles under /debug/pprof/, only on this `host:port` of its own (env "+EnvMetricsAddr+"; default: /metrics on --addr to loopback clients only, no profiles)")
	fs.StringVar(&c.LogFormat, "log-format", orDefault(getenv(EnvLogFormat), LogText), "log `format`: text or json (env "+EnvLogFormat+")")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", getenv(EnvTrustedProxies), "comma-separated `CIDRs` of the reverse proxies whose X-Forwarded-For names the client, for the sign-in limits (env "+EnvTrustedProxies+"; default none: the peer is the client)")
	fs.IntVar(&c.MaxConnections, "max-connections", env.int(EnvMaxConnections, DefaultMaxConnections), "client connections open at once; more are refused at once, the health checks answered (env "+EnvMaxConnections+")")
	// 0, the default, stands for the default share, which depends on
	// --max-connections.
	fs.IntVar(&c.MaxConnectionsPerClient, "max-connections-per-client", env.int(EnvMaxConnectionsPerClient, 0), "connections one client (an IPv4 address or an IPv6 /64) may hold open at once, and requests it may have in flight; less than --max-connections, so that one client cannot take them all (env "+EnvMaxConnectionsPerClient+"; 0 or unset: a quarter of --max-connections, at most "+strconv.Itoa(DefaultMaxConnectionsPerClient)+")")
	fs.IntVar(&c.MinTransferRate, "min-transfer-rate", env.int(EnvMinTransferRate, DefaultMinTransferRate), "slowest a request body may arrive or a media response be read, in `bytes` per second, after a few seconds' grace; 0 for no minimum (env "+EnvMinTransferRate+")")
	SandboxFlag(fs, getenv, &c.Sandbox)
	fs.IntVar(&c.MaxQueuedPerAccount, "max-queued-per-account", env.int(EnvMaxQueuedPerAccount, DefaultMaxQueuedPerAccount), "audios each account may have waiting for or under synthesis; 0 for no limit (env "+EnvMaxQueuedPerAccount+")")
	fs.Int64Var(&c.MaxMediaMBPerAccount, "max-media-mb-per-account", int64(env.int(EnvMaxMediaMBPerAccount, DefaultMaxMediaMBPerAccount)), "`MiB` of published media each account may keep; 0 for no limit (env "+EnvMaxMediaMBPerAccount+")")
	maxSources := env.int(EnvMaxSourcesPerAccount, env.int(EnvMaxFeedsPerAccount, DefaultMaxSourcesPerAccount))
	fs.IntVar(&c.MaxSourcesPerAccount, "max-sources-per-account", maxSources, "sources each account's projects may read, together; 0 for no limit (env "+EnvMaxSourcesPerAccount+")")
	fs.IntVar(&c.MaxSourcesPerAccount, "max-feeds-per-account", maxSources, "deprecated: the old name of --max-sources-per-account (env "+EnvMaxFeedsPerAccount+")")
	fs.DurationVar(&c.MaxAudioDuration, "max-audio-duration", env.duration(EnvMaxAudioDuration, DefaultMaxAudioDuration), "longest audio, pauses included: longer articles are refused or fail (env "+EnvMaxAudioDuration+")")
	return func() (Config, error) {
		if err := env.err(); err != nil {
			return Config{}, err
		}
		b, err := backends()
		if err != nil {
			return Config{}, fromEnv(fs, getenv, err)
		}
		c.Backends = b
		if c.PublicURL == "" {
			c.PublicURL = "http://" + c.Addr
		}
		c.PublicURL = strings.TrimRight(c.PublicURL, "/")
		c.MediaBaseURL = strings.TrimRight(c.MediaBaseURL, "/")
		if c.EngineStandIn > 0 {
			c.CacheMB = 0
		}
		if c.MaxConnectionsPerClient == 0 {
			c.MaxConnectionsPerClient = PerClientShare(c.MaxConnections)
		}
		if err := c.Validate(); err != nil {
			return Config{}, fromEnv(fs, getenv, err)
		}
		return c, nil
	}
}

// SandboxFlag registers --sandbox on fs, into mode, defaulting from
// NARRATOR_SANDBOX: serve's engines and the model check of voices install
// and voices download run as it says.
func SandboxFlag(fs *flag.FlagSet, getenv func(string) string, mode *string) {
	fs.StringVar(mode, "sandbox", orDefault(getenv(EnvSandbox), SandboxAuto), "run speech engines, the MP3 encoder and the check of a voice's model in a sandbox (bubblewrap): auto (if it works here, else warn), on (fail without it) or off (env "+EnvSandbox+")")
}

// ValidateSandbox reports a --sandbox that is not SandboxAuto, SandboxOn or
// SandboxOff.
func ValidateSandbox(mode string) error {
	switch mode {
	case SandboxAuto, SandboxOn, SandboxOff:
		return nil
	}
	return fmt.Errorf("--sandbox must be auto, on or off, not %q", mode)
}

// PerClientShare is the connections one client may hold, and its requests
// in flight, when --max-connections-per-client is not given: a quarter of
// maxConnections, at least 1 and at most DefaultMaxConnectionsPerClient,
// so that a client that holds its whole share leaves room for others.
func PerClientShare(maxConnections int) int {
	return min(max(maxConnections/4, 1), DefaultMaxConnectionsPerClient)
}

// Validate reports the first problem with c.
func (c *Config) Validate() error {
	if c.ONNXRuntime != "" {
		if info, err := os.Stat(c.ONNXRuntime); err != nil || !info.Mode().IsRegular() {
			return fmt.Errorf("--onnxruntime: %q is not the onnxruntime library (scripts/deps.sh onnxruntime prints its path)", c.ONNXRuntime)
		}
	}
	if err := c.Backends.Validate(); err != nil {
		return err
	}
	switch c.Role {
	case RoleAll, RoleAPI, RoleWorker:
	default:
		return fmt.Errorf("--role must be all, api or worker, not %q", c.Role)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("--addr %q is not host:port: %w", c.Addr, err)
	}
	if err := c.validateURLs(); err != nil {
		return err
	}
	if c.SynthesisJobs < 1 || c.SynthesisJobs > 64 {
		return fmt.Errorf("--jobs must be from 1 to 64, not %d", c.SynthesisJobs)
	}
	if c.UnitWorkers < 1 || c.UnitWorkers > 64 {
		return fmt.Errorf("--unit-workers must be from 1 to 64, not %d", c.UnitWorkers)
	}
	if c.CacheMB < 0 {
		return fmt.Errorf("--cache-mb must not be negative")
	}
	if c.MemoryLimitMB < 0 || c.MemoryLimitMB > 1<<20 {
		return fmt.Errorf("--memory-limit-mb must be from 0 to %d, not %d", 1<<20, c.MemoryLimitMB)
	}
	if c.RescueAfter < 5*time.Second || c.RescueAfter > time.Hour {
		return fmt.Errorf("--rescue-after must be from 5s to 1h, not %v", c.RescueAfter)
	}
	if c.EngineStandIn < 0 || c.EngineStandIn > time.Minute {
		return fmt.Errorf("--engine-standin must be from 0 to 1m, not %v", c.EngineStandIn)
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q is not host:port: %w", c.MetricsAddr, err)
		}
		if c.MetricsAddr == c.Addr {
			return fmt.Errorf("--metrics-addr must differ from --addr (leave it empty to serve /metrics on --addr)")
		}
	}
	switch c.LogFormat {
	case LogText, LogJSON:
	default:
		return fmt.Errorf("--log-format must be text or json, not %q", c.LogFormat)
	}
	if _, err := c.TrustedProxyPrefixes(); err != nil {
		return err
	}
	if err := ValidateSandbox(c.Sandbox); err != nil {
		return err
	}
	if err := c.validateConnections(); err != nil {
		return err
	}
	return c.validateQuotas()
}

// validateConnections reports the first problem with c's limits on
// connections and transfers.
func (c *Config) validateConnections() error {
	if c.MaxConnections < 16 || c.MaxConnections > 1_000_000 {
		return fmt.Errorf("--max-connections must be from 16 to 1000000, not %d", c.MaxConnections)
	}
	if c.MaxConnectionsPerClient < 1 || c.MaxConnectionsPerClient >= c.MaxConnections {
		return fmt.Errorf("--max-connections-per-client must be from 1 to %d, less than --max-connections (%d), so that one client cannot take every connection; not %d",
			c.MaxConnections-1, c.MaxConnections, c.MaxConnectionsPerClient)
	}
	if c.MinTransferRate < 0 || c.MinTransferRate > 1<<30 {
		return fmt.Errorf("--min-transfer-rate must be from 0 to %d, not %d", 1<<30, c.MinTransferRate)
	}
	return nil
}

// validateQuotas reports the first problem with c's limits per account
// and per audio.
func (c *Config) validateQuotas() error {
	if c.MaxQueuedPerAccount < 0 {
		return fmt.Errorf("--max-queued-per-account must not be negative, not %d", c.MaxQueuedPerAccount)
	}
	if c.MaxMediaMBPerAccount < 0 || c.MaxMediaMBPerAccount > 1<<30 {
		return fmt.Errorf("--max-media-mb-per-account must be from 0 to %d, not %d", 1<<30, c.MaxMediaMBPerAccount)
	}
	if c.MaxSourcesPerAccount < 0 {
		return fmt.Errorf("--max-sources-per-account must not be negative, not %d", c.MaxSourcesPerAccount)
	}
	if c.MaxAudioDuration < time.Minute || c.MaxAudioDuration > 24*time.Hour {
		return fmt.Errorf("--max-audio-duration must be from 1m to 24h, not %v", c.MaxAudioDuration)
	}
	return nil
}

// TrustedProxyPrefixes parses TrustedProxies: CIDRs ("10.0.0.0/8") or
// single addresses ("192.0.2.1"), separated by commas.
func (c *Config) TrustedProxyPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(c.TrustedProxies, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("--trusted-proxies: %q is neither a CIDR nor an IP address", f)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// MediaURL returns the URL clients fetch a media key from.
func (c *Config) MediaURL(key string) string {
	if c.MediaBaseURL != "" {
		return c.MediaBaseURL + "/" + key
	}
	return c.PublicURL + "/media/" + key
}

// Serves reports whether the node serves the API, dashboard and media.
func (c *Config) Serves() bool { return c.Role != RoleWorker }

// Works reports whether the node works jobs.
func (c *Config) Works() bool { return c.Role != RoleAPI }

// VoiceCacheDir is where a node keeps the installed voices' files it
// fetched, named by their SHA-256. Unlike ScratchDir, it outlives restarts.
func (c *Config) VoiceCacheDir() string { return filepath.Join(c.DataDir, "voices") }

// ScratchDir holds temporary files of renderings under way.
func (c *Config) ScratchDir() string { return filepath.Join(c.DataDir, "tmp") }

// CacheDir holds synthesised sentences for reuse.
func (c *Config) CacheDir() string { return filepath.Join(c.DataDir, "cache", "units") }

// LockPath is the file a running server holds locked.
func (c *Config) LockPath() string { return filepath.Join(c.DataDir, "narrator.lock") }

// validateURLs checks that the URLs of the configuration are absolute
// http or https URLs: the public URL, and the others where set.
func (c *Config) validateURLs() error {
	for _, u := range []struct{ flag, value string }{
		{"--public-url", c.PublicURL}, {"--media-base-url", c.MediaBaseURL}, {"--websub-hub", c.WebSubHub},
	} {
		if (u.value != "" || u.flag == "--public-url") && !isHTTPURL(u.value) {
			return fmt.Errorf("%s %q must be an absolute http or https URL", u.flag, u.value)
		}
	}
	return nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// envDefaults reads flag defaults from the environment and keeps the
// errors of variables that do not parse, for ServeFlags to report once the
// flags are parsed. An unset or empty variable is the given default.
type envDefaults struct {
	getenv func(string) string
	errs   []error
}

// int reads an integer variable.
func (e *envDefaults) int(name string, def int) int {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s must be an integer, not %q", name, v))
		return def
	}
	return n
}

// duration reads a duration variable such as 90s or 2m.
func (e *envDefaults) duration(name string, def time.Duration) time.Duration {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s must be a duration such as 90s or 2m, not %q", name, v))
		return def
	}
	return d
}

// bool reads a boolean variable; its default is false.
func (e *envDefaults) bool(name string) bool {
	b, err := envBool(e.getenv, name)
	if err != nil {
		e.errs = append(e.errs, err)
	}
	return b
}

// err returns the errors of the variables read, or nil.
func (e *envDefaults) err() error { return errors.Join(e.errs...) }

// envInUsage finds the environment variable a flag's usage names.
var envInUsage = regexp.MustCompile(`\(env (NARRATOR_[A-Z0-9_]+)`)

// fromEnv adds to a validation error, which names a flag ("--jobs must
// be ..."), the environment variable its value came from, when the flag was
// not given on the command line but its variable was set.
func fromEnv(fs *flag.FlagSet, getenv func(string) string, err error) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	msg := err.Error()
	var hint error
	fs.VisitAll(func(f *flag.Flag) {
		m := envInUsage.FindStringSubmatch(f.Usage)
		if hint != nil || given[f.Name] || m == nil || getenv(m[1]) == "" {
			return
		}
		if name := "--" + f.Name; strings.HasPrefix(msg, name+" ") || strings.HasPrefix(msg, name+":") {
			hint = fmt.Errorf("%w (set by the environment variable %s)", err, m[1])
		}
	})
	if hint != nil {
		return hint
	}
	return err
}

// envBool reads a boolean environment variable; unset is false.
func envBool(getenv func(string) string, name string) (bool, error) {
	v := getenv(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s must be true or false, not %q", name, v)
	}
	return b, nil
}

// MediaURLFromEnv returns the media URLs of a server started with the
// environment's settings and no flags, for command-line tools that write
// what holds them.
func MediaURLFromEnv(getenv func(string) string) func(key string) string {
	c := Config{
		PublicURL:    strings.TrimRight(orDefault(getenv(EnvPublicURL), "http://"+orDefault(getenv(EnvAddr), DefaultAddr)), "/"),
		MediaBaseURL: strings.TrimRight(getenv(EnvMediaBaseURL), "/"),
	}
	return c.MediaURL
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
