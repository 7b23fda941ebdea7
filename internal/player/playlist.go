package player

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/narrator/narrator"
)

// playlistPages caps how many pages of a project's audios a playlist
// reads, newest first, to find its audios: a project whose latest
// audios are mostly drafts or of other categories shows fewer.
const (
	playlistPages   = 5
	playlistPerPage = 50
)

// servePlaylist serves the player of a project's latest audios that
// anonymous listeners may hear (narrator.Playable), or of those in one
// category (narrator.Audio.InCategory), newest first. A signed project's
// tokens each name one article, so a signed project has no playlist: it
// answers, like a project that does not admit the page or has no such
// audio, as for an audio that does not exist.
func (h *Handler) servePlaylist(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("project_id"), 10, 64)
	if err != nil || id <= 0 {
		h.renderError(w, r, narrator.Errorf(narrator.ENOTFOUND, "no project %q", r.PathValue("project_id")))
		return
	}
	category := r.URL.Query().Get("category")
	if utf8.RuneCountInString(category) > narrator.MaxMetadataValue || !narrator.ValidText(category) {
		h.renderError(w, r, narrator.Errorf(narrator.EINVALID, "category must be at most %d characters of text", narrator.MaxMetadataValue))
		return
	}
	origin := pageOrigin(r)
	access, err := h.store.ProjectAccess(r.Context(), id)
	if err != nil {
		h.renderError(w, r, err)
		return
	}
	var list []*playerData
	if access.Mode == narrator.AccessPublic && access.Admits(narrator.EmbedVisit{Origin: origin}, h.now()) {
		list, err = h.playlist(r.Context(), id, &access, category)
		if err != nil {
			h.renderError(w, r, err)
			return
		}
	}
	if len(list) == 0 {
		h.renderError(w, r, narrator.Errorf(narrator.ENOTFOUND, "no audio for this playlist"))
		return
	}
	d := pageData{Title: "Listen to the latest articles", Player: list[0], Playlist: list, frameAncestors: access.FrameAncestors(),
		Site: siteName(origin), Download: access.DownloadButton}
	h.render(w, r, http.StatusOK, d)
}

// playlist returns the players of a public project's latest playable
// audios in category, at most narrator.PlaylistLength.
func (h *Handler) playlist(ctx context.Context, projectID int64, access *narrator.ProjectAccess, category string) ([]*playerData, error) {
	var list []*playerData
	now := h.now()
	for page := 1; page <= playlistPages && len(list) < narrator.PlaylistLength; page++ {
		audios, err := h.store.ListAudios(ctx, projectID, time.Time{}, page, playlistPerPage)
		if err != nil {
			return nil, fmt.Errorf("playlist of project %d: %w", projectID, err)
		}
		for _, a := range audios {
			if len(list) == narrator.PlaylistLength || !a.InCategory(category) {
				continue
			}
			pub, err := h.store.AudioPublication(ctx, a.ID)
			if err != nil {
				return nil, fmt.Errorf("playlist of project %d: %w", projectID, err)
			}
			if p := newPlayerData(a, h.mediaURL); p != nil && narrator.Playable(a, pub, now) {
				p.EventsURL = "/embed/events"
				p.Artwork = narrator.PlayerArtwork(a, access)
				list = append(list, p)
			}
		}
	}
	return list, nil
}
