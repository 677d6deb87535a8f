package formats

import (
	"net/http"
	"strconv"
	"strings"
)

// systemOneValidation is the body of a System One request that breaks a
// rule, with status 422: FastAPI's {"detail": [{"loc", "msg", "type"}]}.
type systemOneValidation struct {
	Detail []systemOneFault `json:"detail"`
}

// systemOneFault is one fault of a systemOneValidation: where it is in the
// body ("body" then keys and indexes), what is wrong, and pydantic's name
// for the kind of fault ("missing", "json_invalid", "string_type",
// "value_error").
type systemOneFault struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

// systemOneError is the body of every other System One error:
// {"detail": {"error_type", "message"}}.
type systemOneError struct {
	Detail systemOneErrorDetail `json:"detail"`
}

// systemOneErrorDetail is the "detail" member of a systemOneError.
type systemOneErrorDetail struct {
	ErrorType string `json:"error_type"`
	Message   string `json:"message"`
}

// SystemOneModel is a decision model as System One's GET /v1/models lists
// it.
type SystemOneModel struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// ReleaseDate is YYYY-MM-DD.
	ReleaseDate string `json:"release_date"`
}

// StatusIn is the status that style f sends for e. System One answers a
// client error (400) as 422, FastAPI's status for a request that does not
// validate, and an overloaded model as 529, which its SDKs back off from
// and retry; every other status is e.Status.
func (e *Error) StatusIn(f Style) int {
	if f == StyleSystemOne {
		switch {
		case e.Status == http.StatusBadRequest:
			return http.StatusUnprocessableEntity
		case e.Code == "overloaded":
			return 529
		}
	}
	return e.Status
}

// systemOne is e's System One body.
func (e *Error) systemOne() any {
	if e.StatusIn(StyleSystemOne) != http.StatusUnprocessableEntity {
		return systemOneError{Detail: systemOneErrorDetail{ErrorType: e.Type(StyleSystemOne), Message: e.Message}}
	}
	loc := append([]any{"body"}, e.Loc...)
	if len(e.Loc) == 0 && e.Param != "" {
		loc = append(loc, paramPath(e.Param)...)
	}
	typ := "value_error"
	switch e.Code {
	case "missing_required_parameter":
		typ = "missing"
	case "invalid_json":
		typ = "json_invalid"
	case "invalid_type":
		typ = "string_type"
	}
	return systemOneValidation{Detail: []systemOneFault{{Loc: loc, Msg: e.Message, Type: typ}}}
}

// paramPath splits a parameter such as "images[1].url" into its keys and
// indexes: "images", 1, "url".
func paramPath(param string) []any {
	var out []any
	for part := range strings.SplitSeq(param, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			out = append(out, key)
		}
		for rest != "" {
			index, after, _ := strings.Cut(rest, "]")
			if i, err := strconv.Atoi(index); err == nil {
				out = append(out, i)
			} else {
				out = append(out, index)
			}
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return out
}
