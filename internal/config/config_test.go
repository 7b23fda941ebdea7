package config_test

import (
	"flag"
	"io"
	"strings"
	"testing"

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
		{"defaults", nil, nil, config.Config{DataDir: "./narrator-data", Addr: "127.0.0.1:8080", PublicURL: "http://127.0.0.1:8080"}, ""},
		{"environment", nil, map[string]string{config.EnvData: "/d", config.EnvAddr: "0.0.0.0:9", config.EnvPublicURL: "https://a.test/"},
			config.Config{DataDir: "/d", Addr: "0.0.0.0:9", PublicURL: "https://a.test"}, ""},
		{"flags win over the environment", []string{"--data", "/f", "--addr", "127.0.0.1:1", "--public-url", "http://f.test"}, map[string]string{config.EnvData: "/d"},
			config.Config{DataDir: "/f", Addr: "127.0.0.1:1", PublicURL: "http://f.test"}, ""},
		{"public url follows addr", []string{"--addr", "127.0.0.1:9999"}, nil, config.Config{DataDir: "./narrator-data", Addr: "127.0.0.1:9999", PublicURL: "http://127.0.0.1:9999"}, ""},
		{"bad addr", []string{"--addr", "nonsense"}, nil, config.Config{}, "--addr"},
		{"bad public url", []string{"--public-url", "ftp://x"}, nil, config.Config{}, "--public-url"},
		{"empty data", []string{"--data", ""}, nil, config.Config{}, "--data"},
		{"no workers", []string{"--unit-workers", "0"}, nil, config.Config{}, "--unit-workers"},
		{"negative cache", []string{"--cache-mb", "-1"}, nil, config.Config{}, "--cache-mb"},
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
