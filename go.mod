module github.com/zoohq/zoo

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.1.0
	github.com/go-zookeeper/zk v1.0.4
	github.com/klauspost/compress v1.20.3
	github.com/pavlo-v-chernykh/keystore-go/v4 v4.5.0
	go.etcd.io/raft/v3 v3.6.0
	golang.org/x/term v0.47.0
	software.sslmate.com/src/go-pkcs12 v0.7.4
)

require (
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	golang.org/x/crypto v0.11.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
