package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/pipeline"
)

// projectsSetCommand is `narrator projects set`.
type projectsSetCommand struct{ e *env }

// clipFlags are the flags of one clip kind: a file to set, a text to
// speak with a voice, or a removal.
type clipFlags struct {
	kind        narrator.ClipKind
	file        *string
	text, voice *string
	remove      *bool
}

// Run runs `narrator projects set`. A new rate, intro or outro renders
// nothing again (narrator.PlanSpeechRate, narrator.Clip).
func (cmd projectsSetCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "projects set", "projects set [--data DIR|--database URL] --project ID [--speech-rate R] [--intro FILE|--intro-text T [--intro-voice V]|--no-intro] [--outro FILE|--outro-text T [--outro-voice V]|--no-outro]")
	data := config.BackendFlags(fs, e.getenv)
	project := fs.Int64("project", 0, "project `id` (required)")
	rate := fs.Float64("speech-rate", 0, speechRateHelp)
	var clips []clipFlags
	for _, k := range narrator.ClipKinds() {
		clips = append(clips, clipFlags{kind: k,
			file:   fs.String(string(k), "", fmt.Sprintf("MP3 or WAV `file` played %s every audio rendered from now on (at most %.0f s)", clipWhere(k), narrator.MaxClipDuration.Seconds())),
			text:   fs.String(string(k)+"-text", "", fmt.Sprintf("`text` spoken once, now, as the %s, with the project's pronunciation rules and speaking rate (at most %d characters)", k, narrator.MaxClipText)),
			voice:  fs.String(string(k)+"-voice", "", fmt.Sprintf("`voice` (ID or name) speaking --%s-text; the project's body voice by default", k)),
			remove: fs.Bool("no-"+string(k), false, fmt.Sprintf("remove the %s", k)),
		})
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *project <= 0 {
		fs.Usage()
		return usagef("projects set: --project is required")
	}
	decoded, changes, err := decodeClipFlags(ctx, clips)
	if err != nil {
		return err
	}
	if *rate == 0 && changes == 0 {
		fs.Usage()
		return usagef("projects set: give --speech-rate, --intro, --intro-text, --outro, --outro-text, --no-intro or --no-outro")
	}
	return withStore(ctx, e, data, func(st dataStore) (any, error) {
		p, err := setProject(ctx, st, *project, *rate, decoded, clips)
		switch narrator.ErrorCode(err) {
		case "":
		case narrator.ENOTFOUND:
			return nil, fmt.Errorf("projects set: %s", narrator.ErrorMessage(err))
		case narrator.EINVALID:
			return nil, usagef("projects set: %s", narrator.ErrorMessage(err))
		default:
			return nil, fmt.Errorf("set project %d: %w", *project, err)
		}
		cat, err := loadCatalog(ctx, st)
		if err != nil {
			return nil, err
		}
		fmt.Fprintln(e.stderr, "Audios keep their audio; renderings from now on (new audios, edits, resyntheses) use the new settings.")
		return httpapi.ProjectSettingsJSON(cat, p), nil
	})
}

// clipWhere says where a clip of kind plays.
func clipWhere(k narrator.ClipKind) string {
	if k == narrator.ClipIntro {
		return "before"
	}
	return "after"
}

// decodeClipFlags decodes the clip files given, by kind, and counts the
// changes asked for; a file and a removal of the same kind are refused.
func decodeClipFlags(ctx context.Context, clips []clipFlags) (map[narrator.ClipKind]*narrator.Clip, int, error) {
	decoded := map[narrator.ClipKind]*narrator.Clip{}
	changes := 0
	for _, c := range clips {
		if err := checkClipFlags(c); err != nil {
			return nil, 0, err
		}
		switch {
		case *c.text != "":
			changes++ // spoken once the store is open: its rules apply
		case *c.remove:
			changes++
		case *c.file != "":
			clip, err := decodeClipFile(ctx, c.kind, *c.file)
			if err != nil {
				return nil, 0, err
			}
			decoded[c.kind] = clip
			changes++
		}
	}
	return decoded, changes, nil
}

// checkClipFlags refuses flags of one clip kind that ask for more than
// one thing, a voice without a text, or a text CheckClipText refuses.
func checkClipFlags(c clipFlags) error {
	given := 0
	for _, set := range []bool{*c.file != "", *c.text != "", *c.remove} {
		if set {
			given++
		}
	}
	switch {
	case given > 1:
		return usagef("projects set: give one of --%s, --%s-text and --no-%s", c.kind, c.kind, c.kind)
	case *c.voice != "" && *c.text == "":
		return usagef("projects set: --%s-voice speaks --%s-text, which is missing", c.kind, c.kind)
	case *c.text != "":
		if err := narrator.CheckClipText(c.kind, *c.text); err != nil {
			return usagef("projects set: --%s-text: %s", c.kind, narrator.ErrorMessage(err))
		}
	}
	return nil
}

// decodeClipFile reads an MP3 or WAV file, told apart by its first bytes,
// and decodes it as the API does.
func decodeClipFile(ctx context.Context, kind narrator.ClipKind, path string) (*narrator.Clip, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("projects set: --%s: %v", kind, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, narrator.MaxClipBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > narrator.MaxClipBytes {
		return nil, usagef("projects set: --%s: %s is larger than %d bytes", kind, path, narrator.MaxClipBytes)
	}
	contentType := pipeline.ClipMP3
	if bytes.HasPrefix(data, []byte("RIFF")) {
		contentType = pipeline.ClipWAV
	}
	clip, err := pipeline.ClipDecoder{}.DecodeClip(ctx, kind, contentType, data)
	if narrator.ErrorCode(err) == narrator.EINVALID {
		return nil, usagef("projects set: --%s: %s", kind, narrator.ErrorMessage(err))
	}
	return clip, err
}

// setProject applies the rate (0 to keep it) and the clip changes to a
// project and returns it.
func setProject(ctx context.Context, st dataStore, id int64, rate float64, decoded map[narrator.ClipKind]*narrator.Clip, clips []clipFlags) (*narrator.Project, error) {
	p, err := findProject(ctx, st, id)
	if err != nil {
		return nil, err
	}
	if rate != 0 {
		if p, err = st.SetSpeechRate(ctx, id, rate); err != nil {
			return nil, err
		}
	}
	for _, c := range clips {
		if *c.text != "" {
			var clip *narrator.Clip
			if clip, err = speakClipText(ctx, st, p, c); err == nil {
				err = st.SetClip(ctx, clip)
			}
		} else if clip := decoded[c.kind]; clip != nil {
			clip.ProjectID = id
			err = st.SetClip(ctx, clip)
		} else if *c.remove {
			if err = st.RemoveClip(ctx, id, c.kind); narrator.ErrorCode(err) == narrator.ENOTFOUND {
				err = nil // removed already
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// findProject returns the project of any account with that ID, or
// ENOTFOUND.
func findProject(ctx context.Context, st dataStore, id int64) (*narrator.Project, error) {
	all, err := st.ListProjects(ctx, 0)
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if p.ID == id {
			return p, nil
		}
	}
	return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d does not exist", id)
}
