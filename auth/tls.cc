#include "auth/tls.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include "common/files.h"

namespace tf::auth {
namespace {

Result<std::string> ReadPem(const std::string& path, const char* what) {
  auto pem = ReadFile(path);
  if (!pem.ok()) return Status::InvalidArgument(std::string(what) + ": " + pem.status().message());
  if (pem->find("-----BEGIN ") == std::string::npos) {
    return Status::InvalidArgument(std::string(what) + ": " + path + " is not a PEM file");
  }
  return pem;
}

}  // namespace

Result<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerTls& tls) {
  grpc::SslServerCredentialsOptions options;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  TF_ASSIGN_OR_RETURN(pair.cert_chain, ReadPem(tls.cert_file, "--tls-cert"));
  TF_ASSIGN_OR_RETURN(pair.private_key, ReadPem(tls.key_file, "--tls-key"));
  options.pem_key_cert_pairs.push_back(std::move(pair));
  if (!tls.client_ca_file.empty()) {
    TF_ASSIGN_OR_RETURN(options.pem_root_certs, ReadPem(tls.client_ca_file, "--tls-client-ca"));
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

Result<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const ClientTls& tls) {
  if (tls.ca_file.empty()) {
    if (!tls.cert_file.empty()) {
      return Status::InvalidArgument("--tls-cert needs --tls-ca, the CA of the coordinator");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  grpc::SslCredentialsOptions options;
  TF_ASSIGN_OR_RETURN(options.pem_root_certs, ReadPem(tls.ca_file, "--tls-ca"));
  if (!tls.cert_file.empty()) {
    TF_ASSIGN_OR_RETURN(options.pem_cert_chain, ReadPem(tls.cert_file, "--tls-cert"));
    TF_ASSIGN_OR_RETURN(options.pem_private_key, ReadPem(tls.key_file, "--tls-key"));
  }
  return grpc::SslCredentials(options);
}

}  // namespace tf::auth
