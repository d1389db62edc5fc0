// TLS for both of the coordinator's services, through gRPC's own
// credentials: the coordinator presents a certificate, clients and workers
// check it against a CA, and with a client CA set the coordinator requires a
// certificate from every peer (mutual TLS, meant for workers). Files are PEM.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace tf::auth {

struct ServerTls {
  std::string cert_file;       // the coordinator's certificate (chain)
  std::string key_file;        // and its private key
  std::string client_ca_file;  // set: peers must present a certificate it signed
};

// Errors name the file that cannot be read.
Result<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerTls& tls);

struct ClientTls {
  std::string ca_file;    // empty: plaintext
  std::string cert_file;  // with key_file: this peer's certificate, for mutual TLS
  std::string key_file;
};

// Plaintext when tls.ca_file is empty; errors name the file that cannot be
// read, or a certificate given without its key.
Result<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const ClientTls& tls);

}  // namespace tf::auth
