// Package benchserve starts `narrator serve` for the benchmarks under
// bench/: a fresh data directory with an account and a project, a free
// loopback port, and a wait until the server answers.
package benchserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// Server is a running `narrator serve` and what its clients need.
type Server struct {
	Cmd     *exec.Cmd
	Base    string // http://127.0.0.1:PORT
	Key     string // the account's API key
	Project int64

	cgroup *cgroup // nil where the server could not be given one
}

// CPU returns the CPU time that the server and every process it started
// have used so far, counted exactly by a cgroup of their own, and false
// where this machine gave the server none (then the benchmarks sample
// /proc, which misses short-lived processes).
func (s *Server) CPU() (time.Duration, bool) {
	if s.cgroup == nil {
		return 0, false
	}
	d, err := s.cgroup.usage()
	return d, err == nil
}

// Start creates an account and an en_US project in data with bin, then
// starts `bin serve --data data` with extra flags on a free loopback
// port, its standard error to stderr, and waits up to a minute until it
// answers /healthz. The server and its children run in a cgroup of their
// own where the machine allows it (see CPU). The account may queue any number of audios
// (--max-queued-per-account 0): a backlog is what some benchmarks measure.
func Start(bin, data string, stderr io.Writer, extra ...string) (*Server, error) {
	out, err := exec.Command(bin, "accounts", "create", "--data", data, "--name", "Bench").Output()
	if err != nil {
		return nil, fmt.Errorf("accounts create: %w", err)
	}
	var acct struct {
		ID     int64  `json:"id"`
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(out, &acct); err != nil {
		return nil, err
	}
	out, err = exec.Command(bin, "projects", "create", "--data", data, "--account", strconv.FormatInt(acct.ID, 10), "--title", "Bench", "--language", "en_US").Output()
	if err != nil {
		return nil, fmt.Errorf("projects create: %w", err)
	}
	var proj struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(out, &proj); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &Server{Base: "http://" + addr, Key: acct.APIKey, Project: proj.ID}
	command := func() *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"serve", "--data", data, "--addr", addr, "--max-queued-per-account", "0"}, extra...)...)
		cmd.Stderr = stderr
		return cmd
	}
	if cg, err := newCgroup(); err == nil {
		s.Cmd = command()
		s.Cmd.SysProcAttr = cg.attr()
		if err := s.Cmd.Start(); err == nil {
			s.cgroup = cg
		} else {
			cg.remove()
		}
	}
	if s.cgroup == nil {
		s.Cmd = command()
		if err := s.Cmd.Start(); err != nil {
			return nil, err
		}
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(s.Base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s, nil
			}
		}
	}
	s.Stop()
	return nil, fmt.Errorf("narrator did not start on %s", addr)
}

// Call makes an API call with the server's key, body sent as JSON unless it
// is nil, and decodes the JSON answer; an answer other than 200 is an
// error that holds it.
func (s *Server) Call(method, path string, body map[string]any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.Base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.Key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	var m map[string]any
	return m, json.Unmarshal(out, &m)
}

// Stop interrupts the server and waits for it to exit.
func (s *Server) Stop() {
	s.Cmd.Process.Signal(os.Interrupt)
	s.Cmd.Wait()
	if s.cgroup != nil {
		s.cgroup.remove()
	}
}
