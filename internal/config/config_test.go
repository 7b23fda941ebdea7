package config_test

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/config"
)

func TestServeFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		args    []string
		env     map[string]string
		want    config.Config
		wantErr string
	}{
		{"defaults", nil, nil, config.Config{Backends: config.Backends{DataDir: "./narrator-data"}, Addr: "127.0.0.1:8080", PublicURL: "http://127.0.0.1:8080"}, ""},
		{"environment", nil, map[string]string{config.EnvData: "/d", config.EnvAddr: "0.0.0.0:9", config.EnvPublicURL: "https://a.test/"},
			config.Config{Backends: config.Backends{DataDir: "/d"}, Addr: "0.0.0.0:9", PublicURL: "https://a.test"}, ""},
		{"flags win over the environment", []string{"--data", "/f", "--addr", "127.0.0.1:1", "--public-url", "http://f.test"}, map[string]string{config.EnvData: "/d"},
			config.Config{Backends: config.Backends{DataDir: "/f"}, Addr: "127.0.0.1:1", PublicURL: "http://f.test"}, ""},
		{"public url follows addr", []string{"--addr", "127.0.0.1:9999"}, nil, config.Config{Backends: config.Backends{DataDir: "./narrator-data"}, Addr: "127.0.0.1:9999", PublicURL: "http://127.0.0.1:9999"}, ""},
		{"bad addr", []string{"--addr", "nonsense"}, nil, config.Config{}, "--addr"},
		{"bad public url", []string{"--public-url", "ftp://x"}, nil, config.Config{}, "--public-url"},
		{"empty data", []string{"--data", ""}, nil, config.Config{}, "--data"},
		{"no workers", []string{"--unit-workers", "0"}, nil, config.Config{}, "--unit-workers"},
		{"negative cache", []string{"--cache-mb", "-1"}, nil, config.Config{}, "--cache-mb"},
		{"rescue too soon", []string{"--rescue-after", "1s"}, nil, config.Config{}, "--rescue-after"},
		{"stand-in too slow", []string{"--engine-standin", "2m"}, nil, config.Config{}, "--engine-standin"},
		{"bad role", []string{"--role", "boss"}, nil, config.Config{}, "--role"},
		{"bad database", []string{"--database", "mysql://x"}, nil, config.Config{}, "--database"},
		{"empty sqlite path", []string{"--database", "sqlite:"}, nil, config.Config{}, "--database"},
		{"bad media", []string{"--media", "gs://bucket"}, nil, config.Config{}, "--media"},
		{"empty media dir", []string{"--media", "file:"}, nil, config.Config{}, "--media"},
		{"bad media base url", []string{"--media-base-url", "cdn.example.com"}, nil, config.Config{}, "--media-base-url"},
		{"password redacted", []string{"--database", "mysql://u:secret@h/db"}, nil, config.Config{}, "xxxxx"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			finish := config.ServeFlags(fs, func(k string) string { return c.env[k] })
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			got, err := finish()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.DataDir != c.want.DataDir || got.Addr != c.want.Addr || got.PublicURL != c.want.PublicURL {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestBackendDefaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		args         []string
		env          map[string]string
		db, media    string
		role, media0 string
	}{
		{"under data", []string{"--data", "/srv/n"}, nil, "sqlite:/srv/n/narrator.db", "file:/srv/n/media", "all", "http://127.0.0.1:8080/media/k/a.mp3"},
		{"cluster", []string{"--database", "postgres://n@db:5432/n?sslmode=disable", "--media", "s3://b/p?endpoint=http://s3:9000", "--role", "worker", "--media-base-url", "https://cdn.test/"},
			nil, "postgres://n@db:5432/n?sslmode=disable", "s3://b/p?endpoint=http://s3:9000", "worker", "https://cdn.test/k/a.mp3"},
		{"environment", nil, map[string]string{config.EnvDatabase: "sqlite:/x.db", config.EnvMedia: "file:/m", config.EnvRole: "api"},
			"sqlite:/x.db", "file:/m", "api", "http://127.0.0.1:8080/media/k/a.mp3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			finish := config.ServeFlags(fs, func(k string) string { return c.env[k] })
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			got, err := finish()
			if err != nil {
				t.Fatal(err)
			}
			if got.Database != c.db || got.Media != c.media || got.Role != c.role || got.MediaURL("k/a.mp3") != c.media0 {
				t.Errorf("got database %q, media %q, role %q, media URL %q; want %q, %q, %q, %q",
					got.Database, got.Media, got.Role, got.MediaURL("k/a.mp3"), c.db, c.media, c.role, c.media0)
			}
		})
	}
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

// TestLimitFlags: the per-account limits and the length cap come from
// their flags, else their environment variables, else the defaults, and a
// bad value is an error that names its flag or variable.
func TestLimitFlags(t *testing.T) {
	t.Parallel()
	type limits struct {
		queued int
		media  int64
		audio  time.Duration
	}
	cases := []struct {
		name    string
		args    []string
		env     map[string]string
		want    limits
		wantErr string
	}{
		{"defaults", nil, nil, limits{1000, 10240, 3 * time.Hour}, ""},
		{"environment", nil, map[string]string{config.EnvMaxQueuedPerAccount: "5", config.EnvMaxMediaMBPerAccount: "0", config.EnvMaxAudioDuration: "90m"},
			limits{5, 0, 90 * time.Minute}, ""},
		{"flags win", []string{"--max-queued-per-account", "0", "--max-media-mb-per-account", "1", "--max-audio-duration", "1h"},
			map[string]string{config.EnvMaxQueuedPerAccount: "5"}, limits{0, 1, time.Hour}, ""},
		{"negative queue", []string{"--max-queued-per-account", "-1"}, nil, limits{}, "--max-queued-per-account"},
		{"negative media", []string{"--max-media-mb-per-account", "-1"}, nil, limits{}, "--max-media-mb-per-account"},
		{"audio too short", []string{"--max-audio-duration", "10s"}, nil, limits{}, "--max-audio-duration"},
		{"audio too long", []string{"--max-audio-duration", "25h"}, nil, limits{}, "--max-audio-duration"},
		{"bad queue env", nil, map[string]string{config.EnvMaxQueuedPerAccount: "many"}, limits{}, config.EnvMaxQueuedPerAccount},
		{"bad audio env", nil, map[string]string{config.EnvMaxAudioDuration: "3"}, limits{}, config.EnvMaxAudioDuration},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			finish := config.ServeFlags(fs, func(k string) string { return c.env[k] })
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			got, err := finish()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := (limits{got.MaxQueuedPerAccount, got.MaxMediaMBPerAccount, got.MaxAudioDuration}); g != c.want {
				t.Errorf("got %+v, want %+v", g, c.want)
			}
		})
	}
}
