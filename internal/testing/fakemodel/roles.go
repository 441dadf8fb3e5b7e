package fakemodel

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Roles is the text of one model request split by who says it: System is
// what the model takes as system instructions (Anthropic's system, gemini's
// systemInstruction, OpenAI's instructions and system/developer messages),
// User the text of the user turns; each part is separated by a blank line.
type Roles struct {
	System, User string
}

// Roles reads the request body by the API its path names.
func (s Seen) Roles() (Roles, error) {
	switch {
	case strings.HasSuffix(s.Path, ":streamGenerateContent") || strings.HasSuffix(s.Path, ":generateContent"):
		return geminiRoles(s.Body)
	case strings.HasSuffix(s.Path, "/v1/messages"):
		return anthropicRoles(s.Body)
	case strings.HasSuffix(s.Path, "/v1/responses"):
		return openAIRoles(s.Body)
	}
	return Roles{}, fmt.Errorf("fakemodel: no model API at %s", s.Path)
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func joinParts(parts []textPart) string {
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// flexText reads a JSON string or an array of {type, text} blocks.
func flexText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []textPart
	json.Unmarshal(raw, &parts)
	return joinParts(parts)
}

func appendText(dst *string, text string) {
	if text == "" {
		return
	}
	if *dst != "" {
		*dst += "\n\n"
	}
	*dst += text
}

func geminiRoles(body []byte) (Roles, error) {
	var req struct {
		SystemInstruction *struct {
			Parts []textPart `json:"parts"`
		} `json:"systemInstruction"`
		Contents []struct {
			Role  string     `json:"role"`
			Parts []textPart `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Roles{}, fmt.Errorf("fakemodel: gemini request: %w", err)
	}
	var r Roles
	if req.SystemInstruction != nil {
		r.System = joinParts(req.SystemInstruction.Parts)
	}
	for _, c := range req.Contents {
		if c.Role == "user" {
			appendText(&r.User, joinParts(c.Parts))
		}
	}
	return r, nil
}

func anthropicRoles(body []byte) (Roles, error) {
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Roles{}, fmt.Errorf("fakemodel: anthropic request: %w", err)
	}
	r := Roles{System: flexText(req.System)}
	for _, m := range req.Messages {
		if m.Role == "user" {
			appendText(&r.User, flexText(m.Content))
		}
	}
	return r, nil
}

func openAIRoles(body []byte) (Roles, error) {
	var req struct {
		Instructions string `json:"instructions"`
		Input        []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Roles{}, fmt.Errorf("fakemodel: openai request: %w", err)
	}
	r := Roles{System: req.Instructions}
	for _, it := range req.Input {
		if it.Type != "" && it.Type != "message" {
			continue
		}
		switch it.Role {
		case "system", "developer":
			appendText(&r.System, flexText(it.Content))
		case "user":
			appendText(&r.User, flexText(it.Content))
		}
	}
	return r, nil
}
