package httpapi

import (
	"net/http"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/openapi"
)

// routes registers every route. Method-less patterns catch the methods a
// path does not support, so that those answers are JSON too.
func (s *Server) routes() {
	s.mux.Handle("GET /api/v3/projects", s.handle(s.authed(s.listProjects)))
	s.mux.Handle("POST /api/v3/projects/{project_id}/audio", s.handle(s.authed(s.createAudio)))
	s.mux.Handle("GET /api/v3/projects/{project_id}/audio", s.handle(s.authed(s.listAudios)))
	s.mux.Handle("GET /api/v3/projects/{project_id}/audio/{audio_id}", s.handle(s.authed(s.oneAudio(s.store.FindAudio))))
	s.mux.Handle("PUT /api/v3/projects/{project_id}/audio/{audio_id}", s.handle(s.authed(s.updateAudio)))
	s.mux.Handle("DELETE /api/v3/projects/{project_id}/audio/{audio_id}", s.handle(s.authed(s.deleteAudio)))

	// Extensions beside v3, documented in docs/api.md.
	s.mux.Handle("GET /api/v3/voices", s.handle(s.authed(s.listVoices)))
	s.mux.Handle("GET /api/v3/projects/{project_id}/audio/{audio_id}/transcript", s.handle(s.authed(s.audioTranscript)))
	s.mux.Handle("GET /api/v3/projects/{project_id}/audio/{audio_id}/progress", s.handle(s.authed(s.audioProgress)))
	s.mux.Handle("POST /api/v3/projects/{project_id}/audio/import", s.handle(s.authed(s.importAudio)))
	s.mux.Handle("GET /api/v3/projects/{project_id}/pronunciations", s.handle(s.authed(s.listPronunciations)))
	s.mux.Handle("POST /api/v3/projects/{project_id}/pronunciations", s.handle(s.authed(s.setPronunciation)))
	s.mux.Handle("DELETE /api/v3/projects/{project_id}/pronunciations/{rule_id}", s.handle(s.authed(s.removePronunciation)))

	s.mux.Handle("GET /api/v3/projects/{project_id}/webhooks", s.handle(s.authed(s.listWebhooks)))
	s.mux.Handle("POST /api/v3/projects/{project_id}/webhooks", s.handle(s.authed(s.createWebhook)))
	s.mux.Handle("GET /api/v3/projects/{project_id}/webhooks/{webhook_id}", s.handle(s.authed(s.getWebhook)))
	s.mux.Handle("DELETE /api/v3/projects/{project_id}/webhooks/{webhook_id}", s.handle(s.authed(s.deleteWebhook)))
	s.mux.Handle("POST /api/v3/projects/{project_id}/webhooks/{webhook_id}/rotate-secret", s.handle(s.authed(s.rotateWebhookSecret)))
	s.mux.Handle("POST /api/v3/projects/{project_id}/webhooks/{webhook_id}/enable", s.handle(s.authed(s.enableWebhook)))
	s.mux.Handle("POST /api/v3/projects/{project_id}/webhooks/{webhook_id}/test", s.handle(s.authed(s.testWebhook)))
	s.mux.Handle("GET /api/v3/projects/{project_id}/webhooks/{webhook_id}/deliveries", s.handle(s.authed(s.listDeliveries)))
	s.mux.Handle("POST /api/v3/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend", s.handle(s.authed(s.resendDelivery)))

	// The OpenAPI document of all of the above, public and cacheable.
	s.mux.Handle("GET /api/v3/openapi.json", openapi.NewHandler())

	for _, p := range []string{
		"/api/v3/openapi.json",
		"/api/v3/projects/{project_id}/webhooks",
		"/api/v3/projects/{project_id}/webhooks/{webhook_id}",
		"/api/v3/projects/{project_id}/webhooks/{webhook_id}/rotate-secret",
		"/api/v3/projects/{project_id}/webhooks/{webhook_id}/enable",
		"/api/v3/projects/{project_id}/webhooks/{webhook_id}/test",
		"/api/v3/projects/{project_id}/webhooks/{webhook_id}/deliveries",
		"/api/v3/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend",
		"/api/v3/voices",
		"/api/v3/projects/{project_id}/pronunciations",
		"/api/v3/projects/{project_id}/pronunciations/{rule_id}",
		"/api/v3/projects",
		"/api/v3/projects/{project_id}/audio",
		"/api/v3/projects/{project_id}/audio/{audio_id}",
		"/api/v3/projects/{project_id}/audio/{audio_id}/transcript",
		"/api/v3/projects/{project_id}/audio/{audio_id}/progress",
	} {
		s.mux.Handle(p, s.handle(methodNotAllowed))
	}
	// The import path also matches {audio_id}: its other methods are
	// named, so that they answer 405 and not a lookup of audio "import".
	for _, m := range []string{"GET", "PUT", "DELETE", "PATCH"} {
		s.mux.Handle(m+" /api/v3/projects/{project_id}/audio/import", s.handle(methodNotAllowed))
	}
	s.mux.Handle("/", s.handle(notFound))
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	return MethodNotAllowed(r.Method)
}

// MethodNotAllowed is the error, a 405 in WriteError, for a method that a
// path does not support.
func MethodNotAllowed(method string) error {
	return narrator.Errorf(errMethod, "method %s is not allowed on this path", method)
}

func notFound(w http.ResponseWriter, r *http.Request) error {
	return narrator.Errorf(narrator.ENOTFOUND, "no such route")
}
