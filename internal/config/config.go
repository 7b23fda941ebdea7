// Package config builds the server's configuration from flags, then the
// environment, then defaults, and validates it before anything opens.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
)

// Environment variables that stand in for flags not given.
const (
	EnvData      = "NARRATOR_DATA"
	EnvAddr      = "NARRATOR_ADDR"
	EnvPublicURL = "NARRATOR_PUBLIC_URL"
)

// Defaults.
const (
	DefaultData = "./narrator-data"
	DefaultAddr = "127.0.0.1:8080"
)

// Config is the configuration of `narrator serve`.
type Config struct {
	// DataDir holds the database, media, scratch files and the lock that
	// keeps a second server off the same data.
	DataDir string
	// Addr is the host:port to listen on.
	Addr string
	// PublicURL is the base of every URL the API hands out, without a
	// trailing slash.
	PublicURL string
	// SynthesisJobs is how many audios are synthesised at once.
	SynthesisJobs int
	// UnitWorkers is how many sentences are synthesised at once across all
	// audios' engines; it sizes the engine process pools.
	UnitWorkers int
	// CacheMB bounds the cache of synthesised sentences, in MiB.
	CacheMB int
}

// DataFlag registers --data on fs, defaulting from the environment.
func DataFlag(fs *flag.FlagSet, getenv func(string) string) *string {
	return fs.String("data", orDefault(getenv(EnvData), DefaultData), "data `dir`ectory (env "+EnvData+")")
}

// ServeFlags registers the serve flags on fs and returns a function that
// completes and validates the Config once fs is parsed.
func ServeFlags(fs *flag.FlagSet, getenv func(string) string) func() (Config, error) {
	var c Config
	data := DataFlag(fs, getenv)
	fs.StringVar(&c.Addr, "addr", orDefault(getenv(EnvAddr), DefaultAddr), "listen `host:port` (env "+EnvAddr+")")
	fs.StringVar(&c.PublicURL, "public-url", getenv(EnvPublicURL), "base `URL` of every URL the API hands out (env "+EnvPublicURL+"; default http://ADDR)")
	fs.IntVar(&c.SynthesisJobs, "jobs", 2, "audios synthesised at once")
	fs.IntVar(&c.UnitWorkers, "unit-workers", runtime.NumCPU(), "sentences synthesised at once (engine processes per engine)")
	fs.IntVar(&c.CacheMB, "cache-mb", 2048, "size bound of the cache of synthesised sentences, in `MiB` (0 turns it off)")
	return func() (Config, error) {
		c.DataDir = *data
		if c.PublicURL == "" {
			c.PublicURL = "http://" + c.Addr
		}
		c.PublicURL = strings.TrimRight(c.PublicURL, "/")
		return c, c.Validate()
	}
}

// Validate reports the first problem with c.
func (c *Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("--data must not be empty")
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("--addr %q is not host:port: %w", c.Addr, err)
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--public-url %q must be an absolute http or https URL", c.PublicURL)
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
	return nil
}

// DBPath is the SQLite database.
func (c *Config) DBPath() string { return DBPath(c.DataDir) }

// MediaDir holds published media files.
func (c *Config) MediaDir() string { return filepath.Join(c.DataDir, "media") }

// ScratchDir holds temporary files of renderings under way.
func (c *Config) ScratchDir() string { return filepath.Join(c.DataDir, "tmp") }

// CacheDir holds synthesised sentences for reuse.
func (c *Config) CacheDir() string { return filepath.Join(c.DataDir, "cache", "units") }

// LockPath is the file a running server holds locked.
func (c *Config) LockPath() string { return filepath.Join(c.DataDir, "narrator.lock") }

// DBPath is the SQLite database inside a data directory.
func DBPath(dataDir string) string { return filepath.Join(dataDir, "narrator.db") }

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
