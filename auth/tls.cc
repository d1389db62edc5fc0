#include "auth/tls.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

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

// gRPC takes a key that is not the certificate's and fails only when it
// listens or connects, with a message that names neither file.
Status CheckKeyIsTheCertificates(const std::string& cert_pem, const std::string& cert_file,
                                 const std::string& key_pem, const std::string& key_file) {
  using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
  Bio cert_bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), BIO_free);
  Bio key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr), X509_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  ERR_clear_error();
  if (!cert) return Status::InvalidArgument("--tls-cert: " + cert_file + " holds no certificate");
  if (!key) {
    return Status::InvalidArgument("--tls-key: " + key_file +
                                   " holds no private key (or one encrypted with a passphrase)");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("--tls-key: " + key_file +
                                   " is not the key of the certificate in " + cert_file);
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerTls& tls) {
  grpc::SslServerCredentialsOptions options;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  TF_ASSIGN_OR_RETURN(pair.cert_chain, ReadPem(tls.cert_file, "--tls-cert"));
  TF_ASSIGN_OR_RETURN(pair.private_key, ReadPem(tls.key_file, "--tls-key"));
  TF_RETURN_IF_ERROR(
      CheckKeyIsTheCertificates(pair.cert_chain, tls.cert_file, pair.private_key, tls.key_file));
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
    TF_RETURN_IF_ERROR(CheckKeyIsTheCertificates(options.pem_cert_chain, tls.cert_file,
                                                 options.pem_private_key, tls.key_file));
  }
  return grpc::SslCredentials(options);
}

}  // namespace tf::auth
