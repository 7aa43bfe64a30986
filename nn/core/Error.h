#pragma once
// The error hierarchy of dl4cpp. Library code never calls exit/abort: every failure is one of
// these exceptions, carrying a message that tells the user what was wrong and, where it helps,
// what to do about it.
#include <stdexcept>
#include <string>

namespace dl4cpp {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A configuration that cannot be built: bad hyperparameter, missing nIn/nOut, unknown option.
struct ConfigError : Error {
  using Error::Error;
};

// A tensor whose shape does not match what an operation expects.
struct ShapeError : Error {
  using Error::Error;
};

// Bad training data. The subclasses say which kind, so a caller can react to each.
struct DataError : Error {
  using Error::Error;
};
// A data file that does not exist; the message says how to obtain it.
struct DataNotFoundError : DataError {
  using DataError::DataError;
};
// A file that is not what it claims to be (bad magic number, wrong dimensions).
struct DataFormatError : DataError {
  using DataError::DataError;
};
// A file that ends before its header says it should; the message names file and offset.
struct DataTruncatedError : DataError {
  using DataError::DataError;
};
// Two inputs that must agree do not (image count vs label count, features vs labels).
struct DataMismatchError : DataError {
  using DataError::DataError;
};
// A saved file whose stored checksum does not match its content (corrupted on disk or in transit).
struct ChecksumError : DataFormatError {
  using DataFormatError::DataFormatError;
};
// A saved file written by a format version this build cannot read (newer, or never defined).
struct VersionError : DataFormatError {
  using DataFormatError::DataFormatError;
};

// A file that could not be written, renamed or synced; the message names the file and the
// operating system's reason.
struct IoError : Error {
  using Error::Error;
};
// A path the library refuses to write to, found before anything is written (nn/core/OutputPath.h):
// an existing target that is not a regular file (a directory, FIFO, device or socket), a loop of
// symbolic links, or a folder that is missing or not writable. The message names the path and
// what is wrong with it.
struct OutputPathError : IoError {
  using IoError::IoError;
};

// Memory that cannot be had: a tensor larger than the machine's memory, or an allocation that
// failed. The message names what was being allocated and how many bytes.
struct AllocationError : Error {
  using Error::Error;
};

// A failure inside a compute backend.
struct BackendError : Error {
  using Error::Error;
};
struct DnnlError : BackendError {
  using BackendError::BackendError;
};
struct CudaError : BackendError {
  using BackendError::BackendError;
};
struct CublasError : BackendError {
  using BackendError::BackendError;
};

// A training run across processes (parallel/Cluster.h) failed: another rank reported an error,
// a collective did not complete within the cluster's timeout (a rank died or hangs), or the
// library was built without the transport asked for. The message names the rank and the cause.
struct ClusterError : Error {
  using Error::Error;
};

// A model that cannot be carried into or out of an exchange format (ONNX, nn/onnx): a layer,
// activation or vertex the format cannot express, or a file the format's own checker rejects. The
// message names the layer or vertex and why.
struct ModelExchangeError : Error {
  using Error::Error;
};

// Training produced a non-finite loss (diverged); the message names iteration and score.
struct NumericalError : Error {
  using Error::Error;
};

}  // namespace dl4cpp
