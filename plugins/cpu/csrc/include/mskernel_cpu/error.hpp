// Errors raised by kernels and plans.  The bindings translate the kind to a Python exception:
// Runtime -> mskernel.errors.MskernelError, ZeroDivision -> ZeroDivisionError,
// Value -> ValueError, Index -> IndexError, Type -> TypeError.  The plan prefixes the message with the node that
// failed (op name and source line), so a kernel says only what is wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace mskernel_cpu {

enum class ErrorKind { Runtime, ZeroDivision, Value, Index, Type };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  explicit Error(const std::string& message) : Error(ErrorKind::Runtime, message) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace mskernel_cpu
