package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
)

// projectsResynthesizeCommand is `narrator projects resynthesize`.
type projectsResynthesizeCommand struct{ e *env }

// projectResynthesisOut is what `narrator projects resynthesize` prints,
// in the API's shape.
type projectResynthesisOut struct {
	ProjectID   int64  `json:"project_id"`
	Resynthesis string `json:"resynthesis"`
	AudioCount  int    `json:"audio_count"`
}

// Run queues the resynthesis of every live audio of a project
// (narrator.ResynthesisJob's All), which a running server works.
func (cmd projectsResynthesizeCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "projects resynthesize", "projects resynthesize [--data DIR|--database URL] ID")
	data := config.BackendFlags(fs, e.getenv)
	if err := parseWithArgs(fs, args); err != nil {
		return err
	}
	id, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if fs.NArg() != 1 || err != nil || id <= 0 {
		fs.Usage()
		return usagef("projects resynthesize: give one project ID (narrator projects list shows them)")
	}
	return withBackends(ctx, e, data, func(bk *backends) (any, error) {
		p, err := findProject(ctx, bk.store, id)
		if narrator.ErrorCode(err) == narrator.ENOTFOUND {
			return nil, fmt.Errorf("projects resynthesize: %s", narrator.ErrorMessage(err))
		} else if err != nil {
			return nil, fmt.Errorf("projects resynthesize: %w", err)
		}
		err = bk.queue.QueueResynthesis(ctx, narrator.ResynthesisJob{ProjectID: p.ID, All: true})
		if narrator.ErrorCode(err) == narrator.ECONFLICT {
			return nil, fmt.Errorf("projects resynthesize: %s", narrator.ErrorMessage(err))
		} else if err != nil {
			return nil, fmt.Errorf("queue the resynthesis of project %d: %w", p.ID, err)
		}
		fmt.Fprintln(e.stderr, "Queued: a running server re-queues the project's audios within the account's limits.")
		return projectResynthesisOut{ProjectID: p.ID, Resynthesis: "queued", AudioCount: p.AudioCount}, nil
	})
}
