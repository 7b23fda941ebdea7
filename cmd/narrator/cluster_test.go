//go:build e2e

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/proctest"
	"github.com/narrator/narrator/internal/s3/s3test"
)

// clusterEnv returns what a cluster test needs from outside: a PostgreSQL
// server, an S3 server, haproxy and psql (scripts/test.sh provides them).
// It skips, or fails under NARRATOR_TEST_FULL=1, when one is missing.
func clusterEnv(t *testing.T) (adminURL, s3URL string) {
	t.Helper()
	proctest.NeedProgram(t, "haproxy", "apt-get install haproxy")
	proctest.NeedProgram(t, "psql", "apt-get install postgresql-client")
	return pgtest.URL(t), s3test.URL(t)
}

func randomName(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// newDatabase creates an empty database on the test server and returns its URL.
func newDatabase(t *testing.T, adminURL string) string {
	t.Helper()
	name := randomName(t, "narrator_cluster_")
	if out, err := exec.Command("psql", adminURL, "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE "+name).CombinedOutput(); err != nil {
		t.Fatalf("create database: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		exec.Command("psql", adminURL, "-c", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)").Run()
	})
	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// withPrefix returns the S3 media URL with its own key prefix.
func withPrefix(t *testing.T, s3URL, prefix string) string {
	t.Helper()
	u, err := url.Parse(s3URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + prefix
	return u.String()
}

// startHAProxy balances round-robin over the HTTP nodes from addr.
func startHAProxy(t *testing.T, addr string, backends ...*node) *node {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `global
	maxconn 256
defaults
	mode http
	timeout connect 5s
	timeout client 60s
	timeout server 60s
	retries 2
	option redispatch
frontend narrator
	bind %s
	default_backend nodes
backend nodes
	balance roundrobin
	option httpchk GET /healthz
`, addr)
	for i, n := range backends {
		fmt.Fprintf(&b, "\tserver n%d %s check inter 500ms\n", i, strings.TrimPrefix(n.base, "http://"))
	}
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return startNode(t, nil, "http://"+addr, 20*time.Second, "haproxy", "-db", "-f", cfg)
}

// TestCluster drives two API nodes behind haproxy and two worker nodes on
// one PostgreSQL database and one S3 bucket. A worker is killed with
// SIGKILL in the middle of a synthesis; the other one completes the audio,
// which is published once, and both API nodes serve the same audio and
// media.
func TestCluster(t *testing.T) {
	t.Parallel()
	adminURL, s3URL := clusterEnv(t)
	db := newDatabase(t, adminURL)
	media := withPrefix(t, s3URL, randomName(t, "cluster-"))
	backends := []string{"--database", db, "--media", media}

	// The commands read the S3 credentials from the environment.
	cli := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(t.Context(), append(args, backends...), os.Getenv, strings.NewReader(""), &out, &errOut); err != nil {
			t.Fatalf("narrator %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	acct := mustJSON[struct {
		ID     int64  `json:"id"`
		APIKey string `json:"api_key"`
	}](t, cli("accounts", "create", "--name", "Cluster"))
	proj := mustJSON[struct {
		ID int64 `json:"id"`
	}](t, cli("projects", "create", "--account", fmt.Sprint(acct.ID), "--title", "C", "--language", "en_US"))

	// Every node hands out URLs of the balancer, whichever answers.
	lbAddr := freeAddr(t)
	start := func(role string) *node {
		args := append([]string{"--role", role, "--public-url", "http://" + lbAddr,
			"--rescue-after", "10s", "--unit-workers", "1", "--jobs", "1", "--cache-mb", "0"}, backends...)
		return startServer(t, t.TempDir(), freeAddr(t), args...)
	}
	api1, api2 := start("api"), start("api")
	workers := []*node{start("worker"), start("worker")}
	lb := startHAProxy(t, lbAddr, api1, api2)

	// A short audio goes through the whole cluster.
	lb.create(t, proj.ID, map[string]any{"api_key": acct.APIKey, "title": "Short", "body": "<p>One node makes it, another serves it.</p>", "external_id": "short"})
	short := lb.waitProcessed(t, proj.ID, "short", acct.APIKey, 2*time.Minute)
	for _, n := range []*node{api1, api2, api1, api2} {
		res, err := checkedHTTP(t).Get(strings.Replace(short.url(t, "mp3"), lb.base, n.base, 1))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "audio/mpeg" {
			t.Errorf("mp3 from %s: %d %s", n.base, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}

	// A long audio: the worker that takes it is killed mid-synthesis.
	// Distinct sentences, so that no unit is a repeat the pipeline reuses.
	var body strings.Builder
	for i := range 30 {
		fmt.Fprintf(&body, "<p>In district %d the council met for %d hours and agreed a new plan for harbour number %d.</p>", i+1, i+2, i+3)
	}
	long := lb.create(t, proj.ID, map[string]any{"api_key": acct.APIKey, "title": "Long", "body": body.String(), "external_id": "long"})
	started := regexp.MustCompile(`msg=synthesizing audio_id=` + fmt.Sprint(long.ID) + `\b`)
	var victim, survivor *node
	deadline := time.Now().Add(2 * time.Minute)
	for victim == nil && time.Now().Before(deadline) {
		for i, w := range workers {
			if started.MatchString(w.logs.String()) {
				victim, survivor = w, workers[1-i]
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if victim == nil {
		t.Fatal("no worker started the long audio within 2 minutes")
	}
	waitSynthesizing(t, lb.client(t, acct.APIKey), proj.ID, "long")
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	victim.cmd.Wait()
	killedAt := time.Now()
	got := lb.waitProcessed(t, proj.ID, "long", acct.APIKey, 5*time.Minute)
	t.Logf("the surviving worker completed the audio %.0f s after the kill", time.Since(killedAt).Seconds())

	processed := regexp.MustCompile(`msg="audio processed" audio_id=` + fmt.Sprint(long.ID) + `\b`)
	survivor.logs.waitFor(t, fmt.Sprintf(`msg="audio processed" audio_id=%d `, long.ID))
	if n := len(processed.FindAllString(survivor.logs.String(), -1)); n != 1 {
		t.Errorf("the surviving worker published the long audio %d times, want once; log:\n%s", n, survivor.logs.String())
	}
	if processed.MatchString(victim.logs.String()) {
		t.Errorf("the killed worker published the audio before it died; the test did not kill it mid-synthesis")
	}
	// Both API nodes give the same answer.
	for _, n := range []*node{api1, api2} {
		status, raw := n.call(t, "GET", fmt.Sprintf("/api/v3/projects/%d/audio/long?api_key=%s", proj.ID, acct.APIKey), nil)
		if status != 200 {
			t.Fatalf("get from %s: %d %s", n.base, status, raw)
		}
		if a := mustJSON[audioOut](t, string(raw)); a.url(t, "m3u8") != got.url(t, "m3u8") {
			t.Errorf("%s answers m3u8 %s, the balancer %s", n.base, a.url(t, "m3u8"), got.url(t, "m3u8"))
		}
	}
}
