package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/openapi"
)

// importPath is the import extension's path, which {audio_id}'s patterns
// match too.
const importPath = "/api/v3/projects/{project_id}/audio/import"

// route is one endpoint of the API: a method, a ServeMux path pattern and
// the handler.
type route struct {
	method, path string
	h            http.Handler
}

// routeTable returns every route of the API. A route whose path names a
// project names it {project_id}, which authedAs checks against the API
// key's account (TestRoutesDocumented).
func (s *Server) routeTable() []route {
	return []route{
		{"GET", "/api/v3/projects", s.handle(s.authed(s.listProjects))},
		{"POST", "/api/v3/projects/{project_id}/audio", s.handle(s.authedLate(s.createAudio))},
		{"GET", "/api/v3/projects/{project_id}/audio", s.handle(s.authed(s.listAudios))},
		{"GET", "/api/v3/projects/{project_id}/audio/{audio_id}", s.handle(s.authed(s.oneAudio(s.store.FindAudio)))},
		{"PUT", "/api/v3/projects/{project_id}/audio/{audio_id}", s.handle(s.authed(s.updateAudio))},
		{"DELETE", "/api/v3/projects/{project_id}/audio/{audio_id}", s.handle(s.authed(s.deleteAudio))},

		// Extensions beside v3, documented in docs/api.md.
		{"GET", "/api/v3/voices", s.handle(s.authed(s.listVoices))},
		{"GET", "/api/v3/projects/{project_id}/audio/{audio_id}/transcript", s.handle(s.authed(s.audioTranscript))},
		{"GET", "/api/v3/projects/{project_id}/audio/{audio_id}/progress", s.handle(s.authed(s.audioProgress))},
		{"POST", importPath, s.handle(s.authed(s.importAudio))},
		{"GET", "/api/v3/projects/{project_id}/audio/{audio_id}/publication", s.handle(s.authed(s.getPublication))},
		{"PUT", "/api/v3/projects/{project_id}/audio/{audio_id}/publication", s.handle(s.authed(s.setPublication))},
		{"GET", "/api/v3/projects/{project_id}/access", s.handle(s.authed(s.getAccess))},
		{"PUT", "/api/v3/projects/{project_id}/access", s.handle(s.authed(s.setAccess))},
		{"POST", "/api/v3/projects/{project_id}/access/rotate-secret", s.handle(s.authed(s.rotateEmbedSecret))},
		{"GET", "/api/v3/projects/{project_id}/speech", s.handle(s.authed(s.getSpeechSettings))},
		{"PUT", "/api/v3/projects/{project_id}/speech", s.handle(s.authed(s.setSpeechSettings))},
		{"POST", "/api/v3/projects/{project_id}/resynthesize", s.handle(s.authed(s.resynthesizeProject))},
		{"GET", "/api/v3/projects/{project_id}/intro", s.handle(s.authed(s.getClip(narrator.ClipIntro)))},
		{"PUT", "/api/v3/projects/{project_id}/intro", s.handle(s.authedUpload(s.putClip(narrator.ClipIntro)))},
		{"DELETE", "/api/v3/projects/{project_id}/intro", s.handle(s.authed(s.removeClip(narrator.ClipIntro)))},
		{"GET", "/api/v3/projects/{project_id}/outro", s.handle(s.authed(s.getClip(narrator.ClipOutro)))},
		{"PUT", "/api/v3/projects/{project_id}/outro", s.handle(s.authedUpload(s.putClip(narrator.ClipOutro)))},
		{"DELETE", "/api/v3/projects/{project_id}/outro", s.handle(s.authed(s.removeClip(narrator.ClipOutro)))},
		{"GET", "/api/v3/projects/{project_id}/podcast", s.handle(s.authed(s.getPodcast))},
		{"PUT", "/api/v3/projects/{project_id}/podcast", s.handle(s.authed(s.setPodcast))},
		{"POST", "/api/v3/projects/{project_id}/podcast/rotate-token", s.handle(s.authed(s.rotatePodcastToken))},
		{"GET", "/api/v3/projects/{project_id}/pronunciations", s.handle(s.authed(s.listPronunciations))},
		{"POST", "/api/v3/projects/{project_id}/pronunciations", s.handle(s.authed(s.setPronunciation))},
		{"DELETE", "/api/v3/projects/{project_id}/pronunciations/{rule_id}", s.handle(s.authed(s.removePronunciation))},

		{"GET", "/api/v3/projects/{project_id}/webhooks", s.handle(s.authed(s.listWebhooks))},
		{"POST", "/api/v3/projects/{project_id}/webhooks", s.handle(s.authed(s.createWebhook))},
		{"GET", "/api/v3/projects/{project_id}/webhooks/{webhook_id}", s.handle(s.authed(s.getWebhook))},
		{"DELETE", "/api/v3/projects/{project_id}/webhooks/{webhook_id}", s.handle(s.authed(s.deleteWebhook))},
		{"POST", "/api/v3/projects/{project_id}/webhooks/{webhook_id}/rotate-secret", s.handle(s.authed(s.rotateWebhookSecret))},
		{"POST", "/api/v3/projects/{project_id}/webhooks/{webhook_id}/enable", s.handle(s.authed(s.enableWebhook))},
		{"POST", "/api/v3/projects/{project_id}/webhooks/{webhook_id}/test", s.handle(s.authed(s.testWebhook))},
		{"GET", "/api/v3/projects/{project_id}/webhooks/{webhook_id}/deliveries", s.handle(s.authed(s.listDeliveries))},
		{"POST", "/api/v3/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend", s.handle(s.authed(s.resendDelivery))},

		{"GET", "/api/v3/projects/{project_id}/sources", s.handle(s.authed(s.listSources))},
		{"POST", "/api/v3/projects/{project_id}/sources", s.handle(s.authed(s.createSource))},
		{"GET", "/api/v3/projects/{project_id}/sources/{source_id}", s.handle(s.authed(s.getSource))},
		{"DELETE", "/api/v3/projects/{project_id}/sources/{source_id}", s.handle(s.authed(s.deleteSource))},
		{"POST", "/api/v3/projects/{project_id}/sources/{source_id}/poll", s.handle(s.authed(s.pollSource))},
		// The sources' old paths, deprecated aliases for one release.
		{"GET", "/api/v3/projects/{project_id}/feeds", feedsAlias(s.handle(s.authed(s.listSources)))},
		{"POST", "/api/v3/projects/{project_id}/feeds", feedsAlias(s.handle(s.authed(s.createSource)))},
		{"GET", "/api/v3/projects/{project_id}/feeds/{feed_id}", feedsAlias(s.handle(s.authed(s.getSource)))},
		{"DELETE", "/api/v3/projects/{project_id}/feeds/{feed_id}", feedsAlias(s.handle(s.authed(s.deleteSource)))},
		{"POST", "/api/v3/projects/{project_id}/feeds/{feed_id}/poll", feedsAlias(s.handle(s.authed(s.pollSource)))},

		// The OpenAI speech convention, for other apps (openai.go).
		{"POST", "/v1/audio/speech", s.handleOpenAI(s.bearerAuthed(s.createSpeech))},
		{"GET", "/v1/audio/voices", s.handleOpenAI(s.bearerOptional(s.listSpeechVoices))},
		{"GET", "/v1/audio/models", s.handleOpenAI(s.bearerOptional(s.listSpeechModels))},
		{"GET", "/v1/models", s.handleOpenAI(s.bearerAuthed(s.listModels))},

		// The OpenAPI document of all of the above, public and cacheable.
		{"GET", "/api/v3/openapi.json", openapi.NewHandler()},
	}
}

// routes registers every route of routeTable. Each path also gets a
// method-less pattern that catches the methods it does not support, so
// that those answers are JSON too, with an Allow header derived from the
// same table.
func (s *Server) routes() {
	methods := make(map[string][]string) // path → the methods it supports
	for _, rt := range s.routeTable() {
		s.mux.Handle(rt.method+" "+rt.path, rt.h)
		methods[rt.path] = append(methods[rt.path], rt.method)
	}
	for path, ms := range methods {
		if path == importPath {
			// The import path also matches {audio_id}, whose patterns name
			// methods: a method-less one here would conflict with them. Its
			// other methods are named instead, so that they answer 405 and
			// not a lookup of audio "import".
			for _, m := range []string{"GET", "PUT", "DELETE", "PATCH", "OPTIONS"} {
				s.mux.Handle(m+" "+path, s.handle(methodNotAllowed(AllowHeader(ms...))))
			}
			continue
		}
		if isOpenAIPath(path) {
			s.mux.Handle(path, s.handleOpenAI(methodNotAllowed(AllowHeader(ms...))))
			continue
		}
		s.mux.Handle(path, s.handle(methodNotAllowed(AllowHeader(ms...))))
	}
	s.mux.Handle(openAIPrefix, s.handleOpenAI(notFound))
	s.mux.Handle("/", s.handle(notFound))
}

// AllowHeader returns the Allow header of a path whose patterns name these
// methods: sorted, with HEAD wherever GET is, because ServeMux serves HEAD
// with GET's handler.
func AllowHeader(methods ...string) string {
	all := slices.Clone(methods)
	if slices.Contains(all, http.MethodGet) && !slices.Contains(all, http.MethodHead) {
		all = append(all, http.MethodHead)
	}
	slices.Sort(all)
	return strings.Join(slices.Compact(all), ", ")
}

// methodNotAllowed answers every method with the 405, naming allow, the
// path's methods, in the Allow header.
func methodNotAllowed(allow string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", allow)
		return MethodNotAllowed(r.Method)
	}
}

// MethodNotAllowed is the error, a 405 in WriteError, for a method that a
// path does not support. The caller sets the Allow header (AllowHeader).
func MethodNotAllowed(method string) error {
	return narrator.Errorf(errMethod, "method %s is not allowed on this path", method)
}

func notFound(w http.ResponseWriter, r *http.Request) error {
	return narrator.Errorf(narrator.ENOTFOUND, "no such route")
}

// feedsAlias serves an old /feeds path of the sources extension with h, the
// handler of its /sources successor: it names the path's feed_id source_id
// and adds the headers Deprecation: true and a Link to the successor
// (rel="successor-version"). The aliases answer for one release
// (docs/decisions/vocabulary.md).
func feedsAlias(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("feed_id"); id != "" {
			r.SetPathValue("source_id", id)
		}
		successor := strings.Replace(r.URL.EscapedPath(), "/feeds", "/sources", 1)
		w.Header().Set("Deprecation", "true")
		w.Header().Set("Link", "<"+successor+`>; rel="successor-version"`)
		h.ServeHTTP(w, r)
	})
}
