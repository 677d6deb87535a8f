module github.com/inferkit/inferkit

go 1.26.0

require github.com/ollama/ollama v0.24.0

require go.uber.org/goleak v1.3.0 // indirect
