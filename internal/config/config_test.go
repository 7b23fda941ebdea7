package config_test

import (
	"flag"
	"io"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/config"
)

func TestServeFlags(t *testing.T) {
	t.Parallel()
	text := config.LogText
	cases := []serveCase[config.Config]{
		{"defaults", nil, nil, config.Config{Backends: config.Backends{DataDir: "./narrator-data"}, Addr: "127.0.0.1:8080", PublicURL: "http://127.0.0.1:8080", LogFormat: text}, ""},
		{"environment", nil, map[string]string{config.EnvData: "/d", config.EnvAddr: "0.0.0.0:9", config.EnvPublicURL: "https://a.test/"},
			config.Config{Backends: config.Backends{DataDir: "/d"}, Addr: "0.0.0.0:9", PublicURL: "https://a.test", LogFormat: text}, ""},
		{"flags win over the environment", []string{"--data", "/f", "--addr", "127.0.0.1:1", "--public-url", "http://f.test"}, map[string]string{config.EnvData: "/d"},
			config.Config{Backends: config.Backends{DataDir: "/f"}, Addr: "127.0.0.1:1", PublicURL: "http://f.test", LogFormat: text}, ""},
		{"observability from the environment", nil, map[string]string{config.EnvMetricsAddr: "127.0.0.1:9100", config.EnvLogFormat: "json"},
			config.Config{Backends: config.Backends{DataDir: "./narrator-data"}, Addr: "127.0.0.1:8080", PublicURL: "http://127.0.0.1:8080", MetricsAddr: "127.0.0.1:9100", LogFormat: "json"}, ""},
		{"public url follows addr", []string{"--addr", "127.0.0.1:9999"}, nil, config.Config{Backends: config.Backends{DataDir: "./narrator-data"}, Addr: "127.0.0.1:9999", PublicURL: "http://127.0.0.1:9999", LogFormat: text}, ""},
		{"bad addr", []string{"--addr", "nonsense"}, nil, config.Config{}, "--addr"},
		{"bad public url", []string{"--public-url", "ftp://x"}, nil, config.Config{}, "--public-url"},
		{"empty data", []string{"--data", ""}, nil, config.Config{}, "--data"},
		{"no workers", []string{"--unit-workers", "0"}, nil, config.Config{}, "--unit-workers"},
		{"negative cache", []string{"--cache-mb", "-1"}, nil, config.Config{}, "--cache-mb"},
		{"negative memory limit", []string{"--memory-limit-mb", "-1"}, nil, config.Config{}, "--memory-limit-mb"},
		{"rescue too soon", []string{"--rescue-after", "1s"}, nil, config.Config{}, "--rescue-after"},
		{"stand-in too slow", []string{"--engine-standin", "2m"}, nil, config.Config{}, "--engine-standin"},
		{"bad role", []string{"--role", "boss"}, nil, config.Config{}, "--role"},
		{"bad database", []string{"--database", "mysql://x"}, nil, config.Config{}, "--database"},
		{"empty sqlite path", []string{"--database", "sqlite:"}, nil, config.Config{}, "--database"},
		{"bad media", []string{"--media", "gs://bucket"}, nil, config.Config{}, "--media"},
		{"empty media dir", []string{"--media", "file:"}, nil, config.Config{}, "--media"},
		{"bad media base url", []string{"--media-base-url", "cdn.example.com"}, nil, config.Config{}, "--media-base-url"},
		{"bad websub hub", []string{"--websub-hub", "hub.example/"}, nil, config.Config{}, "--websub-hub"},
		{"bad metrics addr", []string{"--metrics-addr", "9100"}, nil, config.Config{}, "--metrics-addr"},
		{"metrics addr is addr", []string{"--metrics-addr", "127.0.0.1:8080"}, nil, config.Config{}, "--metrics-addr"},
		{"bad log format", nil, map[string]string{config.EnvLogFormat: "xml"}, config.Config{}, "--log-format"},
		{"bad trusted proxies", []string{"--trusted-proxies", "10.0.0.0/8, proxy.lan"}, nil, config.Config{}, "--trusted-proxies"},
		{"bad trusted proxies from env", nil, map[string]string{config.EnvTrustedProxies: "10.0.0.0/33"}, config.Config{}, "--trusted-proxies"},
		{"too few connections", []string{"--max-connections", "1"}, nil, config.Config{}, "--max-connections"},
		{"no connection per client", []string{"--max-connections-per-client", "-1"}, nil, config.Config{}, "--max-connections-per-client"},
		{"one client takes every connection", []string{"--max-connections", "16", "--max-connections-per-client", "16"}, nil, config.Config{}, "--max-connections-per-client"},
		{"one client takes more than every connection", nil, map[string]string{config.EnvMaxConnectionsPerClient: "64", config.EnvMaxConnections: "16"}, config.Config{}, config.EnvMaxConnectionsPerClient},
		{"negative transfer rate", []string{"--min-transfer-rate", "-1"}, nil, config.Config{}, "--min-transfer-rate"},
		{"connections not a number", nil, map[string]string{config.EnvMaxConnections: "many"}, config.Config{}, config.EnvMaxConnections},
		{"password redacted", []string{"--database", "mysql://u:secret@h/db"}, nil, config.Config{}, "xxxxx"},
	}
	runServeCases(t, cases, func(c config.Config) config.Config {
		return config.Config{Backends: config.Backends{DataDir: c.DataDir}, Addr: c.Addr, PublicURL: c.PublicURL, MetricsAddr: c.MetricsAddr, LogFormat: c.LogFormat}
	})
}

// serveCase is one parse of serve's flags, args with env as the environment: it must give an
// error naming wantErr or, if wantErr is empty, a Config of which the test's part is want.
type serveCase[T any] struct {
	name    string
	args    []string
	env     map[string]string
	want    T
	wantErr string
}

// runServeCases runs each case as a parallel subtest, part taking the part of the Config
// that the test compares.
func runServeCases[T any](t *testing.T, cases []serveCase[T], part func(config.Config) T) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseServe(t, c.env, c.args...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, part(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestHardeningFlags(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	env := map[string]string{config.EnvTrustedProxies: "10.0.0.0/8, 192.0.2.7,2001:db8::/32", config.EnvMaxConnections: "64"}
	finish := config.ServeFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	c, err := finish()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.TrustedProxyPrefixes()
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("2001:db8::/32")}
	if !slices.Equal(ps, want) || c.MaxConnections != 64 {
		t.Errorf("trusted proxies %v, max connections %d; want %v and 64", ps, c.MaxConnections, want)
	}
	for _, name := range []string{"trusted-proxies", "max-connections"} {
		f := fs.Lookup(name)
		if f == nil || !strings.Contains(f.Usage, "(env NARRATOR_") {
			t.Errorf("flag --%s is missing or its usage names no env variable", name)
		}
	}
}

func TestBackendDefaults(t *testing.T) {
	t.Parallel()
	// The part compared: the database, the media, the role and the URL of media "k/a.mp3".
	type backends struct{ Database, Media, Role, MediaURL string }
	cases := []serveCase[backends]{
		{"under data", []string{"--data", "/srv/n"}, nil, backends{"sqlite:/srv/n/narrator.db", "file:/srv/n/media", "all", "http://127.0.0.1:8080/media/k/a.mp3"}, ""},
		{"cluster", []string{"--database", "postgres://n@db:5432/n?sslmode=disable", "--media", "s3://b/p?endpoint=http://s3:9000", "--role", "worker", "--media-base-url", "https://cdn.test/"},
			nil, backends{"postgres://n@db:5432/n?sslmode=disable", "s3://b/p?endpoint=http://s3:9000", "worker", "https://cdn.test/k/a.mp3"}, ""},
		{"environment", nil, map[string]string{config.EnvDatabase: "sqlite:/x.db", config.EnvMedia: "file:/m", config.EnvRole: "api"},
			backends{"sqlite:/x.db", "file:/m", "api", "http://127.0.0.1:8080/media/k/a.mp3"}, ""},
	}
	runServeCases(t, cases, func(c config.Config) backends {
		return backends{c.Database, c.Media, c.Role, c.MediaURL("k/a.mp3")}
	})
}

func TestCopyFlags(t *testing.T) {
	t.Parallel()
	all := []string{"--from-database", "sqlite:/a/narrator.db", "--from-media", "file:/a/media",
		"--to-database", "postgres://u:secret@db/narrator", "--to-media", "s3://bucket/media?endpoint=http://s3.test"}
	without := func(flag string) []string {
		var out []string
		for i := 0; i < len(all); i += 2 {
			if all[i] != flag {
				out = append(out, all[i], all[i+1])
			}
		}
		return out
	}
	with := func(flag, value string) []string { return append(without(flag), flag, value) }
	cases := []struct {
		name    string
		args    []string
		wantErr string // "" means valid
	}{
		{"all four", all, ""},
		{"no from-database", without("--from-database"), "--from-database is required"},
		{"no from-media", without("--from-media"), "--from-media is required"},
		{"no to-database", without("--to-database"), "--to-database is required"},
		{"no to-media", without("--to-media"), "--to-media is required"},
		{"bad from-database", with("--from-database", "mysql://x"), "--from-database"},
		{"bad to-media", with("--to-media", "gs://bucket"), "--to-media"},
		{"password redacted", with("--to-database", "mysql://u:secret@h/db"), "xxxxx"},
		{"same database", with("--to-database", "sqlite:/a/narrator.db"), "--to-database must not be --from-database"},
		{"same media", with("--to-media", "file:/a/media"), "--to-media must not be --from-media"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("copy-data", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			finish := config.CopyFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			got, err := finish()
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			case c.wantErr == "" && (got.From.Database != all[1] || got.From.Media != all[3] || got.To.Database != all[5] || got.To.Media != all[7]):
				t.Errorf("Copy = %+v", got)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("error %v shows the password", err)
			}
		})
	}
}

// serveEnvSamples holds, for every serve flag, a valid value unlike its
// default and, where one exists, a value its environment variable must
// refuse. TestServeFlagsEnvironment fails for a flag missing here, so that
// every new flag comes with an environment variable and a test of it.
var serveEnvSamples = map[string]struct{ good, bad string }{
	"data":                       {"/srv/narrator", ""},
	"database":                   {"sqlite:/srv/x.db", "mysql://x"},
	"media":                      {"file:/srv/m", "gs://bucket"},
	"role":                       {"worker", "boss"},
	"addr":                       {"0.0.0.0:9000", "nonsense"},
	"public-url":                 {"https://audio.example.com", "ftp://x"},
	"media-base-url":             {"https://cdn.example.com", "ftp://x"},
	"jobs":                       {"7", "many"},
	"unit-workers":               {"61", "0"},
	"cache-mb":                   {"10", "-1"},
	"memory-limit-mb":            {"64", "-1"},
	"rescue-after":               {"5m", "soon"},
	"engine-standin":             {"5ms", "2m"},
	"onnxruntime":                {"/etc/passwd", "/nonexistent/libonnxruntime.so.1"},
	"webhooks-allow-private":     {"true", "perhaps"},
	"websub-hub":                 {"https://hub.example/", "hub.example"},
	"metrics-addr":               {"127.0.0.1:9100", "nonsense"},
	"log-format":                 {"json", "xml"},
	"trusted-proxies":            {"10.0.0.0/8", "10.0.0.0/33"},
	"max-connections":            {"64", "many"},
	"max-connections-per-client": {"8", "-1"},
	"min-transfer-rate":          {"2048", "-1"},
	"sandbox":                    {"off", "maybe"},
	"max-queued-per-account":     {"5", "many"},
	"max-media-mb-per-account":   {"1", "-1"},
	"max-audio-duration":         {"90m", "3"},
	"max-sources-per-account":    {"7", "-1"},
	"max-feeds-per-account":      {"7", "many"},
}

// TestServeFlagsEnvironment walks every flag of serve: its usage, which
// --help prints, names its environment variable; setting that variable
// alone changes the parsed Config as the flag would; a bad value is an
// error naming the variable; and the flag wins over the variable.
func TestServeFlagsEnvironment(t *testing.T) {
	t.Parallel()
	defaults, err := parseServe(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config.ServeFlags(fs, func(string) string { return "" })
	envName := regexp.MustCompile(`\(env (NARRATOR_[A-Z0-9_]+)[;)]`)
	seen := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		t.Run(f.Name, func(t *testing.T) {
			m := envName.FindStringSubmatch(f.Usage)
			if m == nil {
				t.Fatalf("--%s usage %q does not name its environment variable as (env NARRATOR_...)", f.Name, f.Usage)
			}
			name := m[1]
			if seen[name] {
				t.Fatalf("%s names a second flag", name)
			}
			seen[name] = true
			sample, ok := serveEnvSamples[f.Name]
			if !ok {
				t.Fatalf("--%s has no sample values in serveEnvSamples", f.Name)
			}
			byEnv, err := parseServe(t, map[string]string{name: sample.good})
			if err != nil {
				t.Fatalf("%s=%s: %v", name, sample.good, err)
			}
			if reflect.DeepEqual(byEnv, defaults) {
				t.Errorf("%s=%s left the Config at its defaults", name, sample.good)
			}
			byFlag, err := parseServe(t, nil, "--"+f.Name, sample.good)
			if err != nil {
				t.Fatalf("--%s %s: %v", f.Name, sample.good, err)
			}
			if diff := cmp.Diff(byFlag, byEnv); diff != "" {
				t.Errorf("%s=%s and --%s %s differ (-flag +env):\n%s", name, sample.good, f.Name, sample.good, diff)
			}
			if won, err := parseServe(t, map[string]string{name: sample.good}, "--"+f.Name+"="+f.DefValue); err != nil || !reflect.DeepEqual(won, defaults) {
				t.Errorf("--%s=%s with %s=%s: got %+v, %v; want the flag to win", f.Name, f.DefValue, name, sample.good, won, err)
			}
			if sample.bad == "" {
				return
			}
			if _, err := parseServe(t, map[string]string{name: sample.bad}); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: error %v, want one naming %s", name, sample.bad, err, name)
			}
		})
	})
	if len(seen) != len(serveEnvSamples) {
		t.Errorf("serveEnvSamples has %d flags, serve %d", len(serveEnvSamples), len(seen))
	}
}

func TestSandboxFlag(t *testing.T) {
	t.Parallel()
	runServeCases(t, []serveCase[string]{
		{"default", nil, nil, config.SandboxAuto, ""},
		{"environment", nil, map[string]string{config.EnvSandbox: "on"}, config.SandboxOn, ""},
		{"flag wins", []string{"--sandbox", "off"}, map[string]string{config.EnvSandbox: "on"}, config.SandboxOff, ""},
		{"bad value", []string{"--sandbox", "yes"}, nil, "", "--sandbox"},
		{"bad environment", nil, map[string]string{config.EnvSandbox: "maybe"}, "", "--sandbox"},
	}, func(c config.Config) string { return c.Sandbox })
}

// TestLimitFlags: the per-account limits and the length cap come from
// their flags, else their environment variables, else the defaults, and a
// bad value is an error that names its flag or variable.
func TestLimitFlags(t *testing.T) {
	t.Parallel()
	type limits struct {
		Queued  int
		Media   int64
		Audio   time.Duration
		Sources int
	}
	cases := []serveCase[limits]{
		{"defaults", nil, nil, limits{1000, 10240, 3 * time.Hour, 100}, ""},
		{"environment", nil, map[string]string{config.EnvMaxQueuedPerAccount: "5", config.EnvMaxMediaMBPerAccount: "0", config.EnvMaxAudioDuration: "90m", config.EnvMaxSourcesPerAccount: "7"},
			limits{5, 0, 90 * time.Minute, 7}, ""},
		{"flags win", []string{"--max-queued-per-account", "0", "--max-media-mb-per-account", "1", "--max-audio-duration", "1h", "--max-sources-per-account", "0"},
			map[string]string{config.EnvMaxQueuedPerAccount: "5", config.EnvMaxSourcesPerAccount: "7"}, limits{0, 1, time.Hour, 0}, ""},
		{"old environment name", nil, map[string]string{config.EnvMaxFeedsPerAccount: "7"}, limits{1000, 10240, 3 * time.Hour, 7}, ""},
		{"new environment name wins", nil, map[string]string{config.EnvMaxFeedsPerAccount: "7", config.EnvMaxSourcesPerAccount: "9"}, limits{1000, 10240, 3 * time.Hour, 9}, ""},
		{"old flag name", []string{"--max-feeds-per-account", "3"}, nil, limits{1000, 10240, 3 * time.Hour, 3}, ""},
		{"negative sources", []string{"--max-sources-per-account", "-1"}, nil, limits{}, "--max-sources-per-account"},
		{"negative queue", []string{"--max-queued-per-account", "-1"}, nil, limits{}, "--max-queued-per-account"},
		{"negative media", []string{"--max-media-mb-per-account", "-1"}, nil, limits{}, "--max-media-mb-per-account"},
		{"audio too short", []string{"--max-audio-duration", "10s"}, nil, limits{}, "--max-audio-duration"},
		{"audio too long", []string{"--max-audio-duration", "25h"}, nil, limits{}, "--max-audio-duration"},
		{"bad queue env", nil, map[string]string{config.EnvMaxQueuedPerAccount: "many"}, limits{}, config.EnvMaxQueuedPerAccount},
		{"bad audio env", nil, map[string]string{config.EnvMaxAudioDuration: "3"}, limits{}, config.EnvMaxAudioDuration},
	}
	runServeCases(t, cases, func(c config.Config) limits {
		return limits{c.MaxQueuedPerAccount, c.MaxMediaMBPerAccount, c.MaxAudioDuration, c.MaxSourcesPerAccount}
	})
}

// parseServe parses args as serve's flags with env as the environment and
// returns the completed Config, or its error.
func parseServe(t *testing.T, env map[string]string, args ...string) (config.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	finish := config.ServeFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return finish()
}

// TestConnectionShare: one client's share of the connections is a quarter
// of --max-connections unless given, at most the default, and always
// leaves room for another client; a share that would not is refused.
func TestConnectionShare(t *testing.T) {
	t.Parallel()
	// The part compared: max connections, and per client.
	cases := []serveCase[[2]int]{
		{"defaults", nil, nil, [2]int{1024, 64}, ""},
		{"a small cap alone", []string{"--max-connections", "16"}, nil, [2]int{16, 4}, ""},
		{"a cap alone from the environment", nil, map[string]string{config.EnvMaxConnections: "100"}, [2]int{100, 25}, ""},
		{"a large cap alone", []string{"--max-connections", "100000"}, nil, [2]int{100000, 64}, ""},
		{"zero is the default share", []string{"--max-connections", "16", "--max-connections-per-client", "0"}, nil, [2]int{16, 4}, ""},
		{"both given", []string{"--max-connections", "16", "--max-connections-per-client", "15"}, nil, [2]int{16, 15}, ""},
		{"share given alone", []string{"--max-connections-per-client", "200"}, nil, [2]int{1024, 200}, ""},
		{"share is the cap", []string{"--max-connections", "16", "--max-connections-per-client", "16"}, nil, [2]int{}, "--max-connections-per-client"},
		{"share over the cap", []string{"--max-connections", "16", "--max-connections-per-client", "64"}, nil, [2]int{}, "--max-connections-per-client"},
	}
	runServeCases(t, cases, func(c config.Config) [2]int { return [2]int{c.MaxConnections, c.MaxConnectionsPerClient} })
}
