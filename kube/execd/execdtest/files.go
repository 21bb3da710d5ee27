package execdtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/sandscope/sandscope/kube/execd"
)

// File returns the content stored at path and whether there is one.
func (s *Server) File(path string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.files[path]
	return b, ok
}

// PutFile stores content at path, as if the sandbox had written it.
func (s *Server) PutFile(path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string][]byte{}
	}
	s.files[path] = content
}

// Uploads counts accepted POST /files/upload requests.
func (s *Server) Uploads() int64 { return s.uploads.Load() }

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST_BODY", err.Error())
		return
	}
	var meta execd.FileMetadata
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			writeError(w, http.StatusBadRequest, "INVALID_REQUEST_BODY", "no file part")
			return
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "INVALID_REQUEST_BODY", err.Error())
			return
		}
		switch part.FormName() {
		case "metadata":
			if err := json.NewDecoder(part).Decode(&meta); err != nil || !strings.HasPrefix(meta.Path, "/") {
				writeError(w, http.StatusBadRequest, "INVALID_REQUEST_BODY", "metadata.path must be absolute")
				return
			}
		case "file":
			if meta.Path == "" {
				writeError(w, http.StatusBadRequest, "INVALID_REQUEST_BODY", "metadata must come first")
				return
			}
			data, err := io.ReadAll(part)
			if err != nil {
				writeError(w, http.StatusBadRequest, "INVALID_REQUEST_BODY", err.Error())
				return
			}
			s.uploads.Add(1)
			s.PutFile(meta.Path, data)
			w.WriteHeader(http.StatusOK)
			return
		}
	}
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	data, ok := s.File(r.URL.Query().Get("path"))
	if !ok {
		writeError(w, http.StatusNotFound, "FILE_NOT_FOUND", "no such file: "+r.URL.Query().Get("path"))
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(data) //nolint:errcheck // the client sees a short body
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"code": code, "message": message}) //nolint:errcheck
}
