package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/neural"
)

// voicesSetupCommand is `narrator voices setup-default`, the quickstart's neural voice step.
type voicesSetupCommand struct{ e *env }

// Run installs a language's recommended Piper voice, which then speaks the language's new
// projects, if the voice repository answers within --reach-timeout. It does nothing if the
// voice is installed already, or if NARRATOR_NO_NEURAL is set. Where it cannot install the
// voice, it prints one line saying why and how to add it later, and succeeds: the built-in
// voices go on speaking.
func (cmd voicesSetupCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	var f installFlags
	fs := installFlagSet(e, "voices setup-default", "voices setup-default [flags]", &f)
	from := fs.String("from", cmp.Or(e.getenv(config.EnvVoicesURL), neural.PiperVoicesURL), "the Piper voice repository, or a mirror with its layout (env "+config.EnvVoicesURL+")")
	allowHTTP := fs.Bool("allow-insecure-mirror", false, "accept a --from mirror over plain http")
	reach := fs.Duration("reach-timeout", 10*time.Second, "give up if the repository's index has not arrived after this `long`, connection included")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up on the whole download after this `long`")
	if err := parse(fs, args); err != nil {
		return err
	}
	if v := e.getenv(config.EnvNoNeural); v != "" && v != "0" {
		return nil
	}
	f.language = cmp.Or(f.language, demoLanguage)
	rec, ok := neural.RecommendedVoices[f.language]
	if !ok {
		return nil
	}
	f.gender = cmp.Or(f.gender, rec.Gender)
	b, err := f.data()
	if err != nil {
		return usagef("voices setup-default: %v", err)
	}
	later := func(why string) error {
		fmt.Fprintf(e.stdout, "No neural voice (%s); the built-in voices speak. To add one later: NARRATOR_ONNXRUNTIME=$(scripts/deps.sh onnxruntime) bin/narrator voices download %s --gender %s %s\n",
			strings.ReplaceAll(why, "\n", " "), storeFlags(b), strings.ToLower(rec.Gender), rec.Name)
		return nil
	}
	if installed, err := voiceInstalled(ctx, e, b, neural.PiperID(rec.Name)); err != nil {
		return err
	} else if installed {
		return nil
	}
	if f.library == "" {
		return later("no onnxruntime library")
	}
	dialer := &net.Dialer{Timeout: *reach}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: dialer.DialContext, TLSHandshakeTimeout: *reach, ResponseHeaderTimeout: time.Minute}}
	got, remove, err := downloadPiper(ctx, client, *from, rec.Name, *timeout, neural.DownloadOptions{AllowHTTP: *allowHTTP, IndexTimeout: *reach})
	if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
		return later(*from + ": " + uerr.Err.Error())
	} else if err != nil {
		return later(err.Error())
	}
	defer remove()
	if f.card == "" {
		f.card = got.Card
	}
	// The catalog table installVoice prints is left out: one line says what happened.
	quiet := &env{getenv: e.getenv, stdin: e.stdin, stdout: io.Discard, stderr: e.stderr}
	if err := installVoice(ctx, quiet, &f, got.Model, got.Config); err != nil {
		return later(err.Error())
	}
	fmt.Fprintf(e.stdout, "Installed the neural voice %s from %s: new %s projects speak with it (%s=1 skips this step)\n", rec.Name, *from, f.language, config.EnvNoNeural)
	return nil
}

// voiceInstalled reports whether the voice with this ID is installed.
func voiceInstalled(ctx context.Context, e *env, b config.Backends, id string) (installed bool, err error) {
	err = useStore(ctx, e, func() (config.Backends, error) { return b, nil }, func(bk *backends) error {
		vs, err := bk.store.ListInstalledVoices(ctx)
		if err != nil {
			return fmt.Errorf("read the installed voices: %w", err)
		}
		installed = slices.ContainsFunc(vs, func(v *narrator.InstalledVoice) bool { return v.EngineVoice == id })
		return nil
	})
	return installed, err
}
