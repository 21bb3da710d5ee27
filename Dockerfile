# sandscope image: a static binary on distroless, non-root.
#   docker build -t sandscope .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sandscope .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sandscope /sandscope
USER 65532:65532
EXPOSE 9808
ENTRYPOINT ["/sandscope"]
CMD ["serve", "--all-namespaces"]
