// Shared N-API plumbing for the engine's bindings (vo/binding.cc, render/binding.cc): argument
// readers that throw a JS TypeError naming the function and field, a guard that turns any C++
// failure into a message, and a Promise-returning AsyncWorker. Header-only, no state.
#pragma once

#include <napi.h>
#include <opencv2/core.hpp>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace egogeo::napi {

/// Reads and validates a call's arguments; every error is "fn: field ...".
class Args {
 public:
  Args(Napi::Env env, const char* fn) : env_(env), fn_(fn) {}
  Napi::Env env() const { return env_; }

  [[noreturn]] void fail(const std::string& msg) const { throw Napi::TypeError::New(env_, std::string(fn_) + ": " + msg); }

  double number(const Napi::Object& o, const char* key, const std::string& where, double dflt,
                double lo = -std::numeric_limits<double>::infinity(), double hi = std::numeric_limits<double>::infinity(),
                bool required = false) const {
    Napi::Value v = o.Get(key);
    const std::string name = where + "." + key;
    if (v.IsUndefined()) {
      if (required) fail(name + " is required");
      return dflt;
    }
    if (!v.IsNumber()) fail(name + " must be a number");
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!std::isfinite(d)) fail(name + " must be finite");
    if (d < lo || d > hi) fail(name + " must be in [" + str(lo) + ", " + str(hi) + "], got " + str(d));
    return d;
  }

  int integer(const Napi::Object& o, const char* key, const std::string& where, int dflt, int lo, int hi) const {
    const double d = number(o, key, where, dflt, lo, hi);
    if (d != std::floor(d)) fail(where + "." + key + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int>(d);
  }

  bool boolean(const Napi::Object& o, const char* key, const std::string& where, bool dflt) const {
    Napi::Value v = o.Get(key);
    if (v.IsUndefined()) return dflt;
    if (!v.IsBoolean()) fail(where + "." + key + " must be a boolean");
    return v.As<Napi::Boolean>().Value();
  }

  std::string choice(const Napi::Object& o, const char* key, const std::string& where, const std::string& dflt,
                     std::initializer_list<const char*> allowed) const {
    Napi::Value v = o.Get(key);
    if (v.IsUndefined()) return dflt;
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "'" : ", '") + std::string(a) + "'";
    if (!v.IsString()) fail(where + "." + key + " must be one of " + list);
    const std::string s = v.As<Napi::String>().Utf8Value();
    for (const char* a : allowed)
      if (s == a) return s;
    fail(where + "." + key + " must be one of " + list + ", got '" + s + "'");
  }

  /// A number array or a Float64Array, every element finite.
  std::vector<double> numbers(Napi::Value v, const std::string& where) const {
    std::vector<double> out;
    if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_float64_array) {
      auto a = v.As<Napi::Float64Array>();
      out.assign(a.Data(), a.Data() + a.ElementLength());
    } else if (v.IsArray()) {
      auto a = v.As<Napi::Array>();
      out.reserve(a.Length());
      for (uint32_t i = 0; i < a.Length(); ++i) {
        Napi::Value e = a.Get(i);
        if (!e.IsNumber()) fail(where + "[" + std::to_string(i) + "] must be a number");
        out.push_back(e.As<Napi::Number>().DoubleValue());
      }
    } else {
      fail(where + " must be an array of numbers or a Float64Array");
    }
    for (size_t i = 0; i < out.size(); ++i)
      if (!std::isfinite(out[i])) fail(where + "[" + std::to_string(i) + "] must be finite");
    return out;
  }

  /// A nested options object; absent means empty (all defaults).
  Napi::Object object(const Napi::Object& o, const char* key, const std::string& where) const {
    Napi::Value v = o.Get(key);
    if (v.IsUndefined()) return Napi::Object::New(env_);
    if (!v.IsObject() || v.IsArray()) fail(where + "." + key + " must be an object");
    return v.As<Napi::Object>();
  }

  /// Rejects keys outside `allowed`, so a typo never silently falls back to a default.
  void known_keys(const Napi::Object& o, const std::string& where, std::initializer_list<const char*> allowed) const {
    Napi::Array keys = o.GetPropertyNames();
    for (uint32_t i = 0; i < keys.Length(); ++i) {
      const std::string k = keys.Get(i).ToString().Utf8Value();
      bool ok = false;
      for (const char* a : allowed) ok = ok || k == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail("unknown option " + where + "." + k + " (known: " + list + ")");
      }
    }
  }

 private:
  static std::string str(double d) {
    std::string s = std::to_string(d);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  Napi::Env env_;
  const char* fn_;
};

/// Runs `work`, turning every C++ failure into "fn: message" (nothing escapes into N-API).
/// `InputErrorT` is the engine's error for bad input, reported without a category.
template <class InputErrorT, class F>
bool guarded(const char* fn, F&& work, std::string& error) {
  try {
    work();
    return true;
  } catch (const InputErrorT& e) {
    error = std::string(fn) + ": " + e.what();
  } catch (const cv::Exception& e) {
    error = std::string(fn) + ": OpenCV error: " + e.err;
  } catch (const std::bad_alloc&) {
    error = std::string(fn) + ": out of memory";
  } catch (const std::exception& e) {
    error = std::string(fn) + ": internal error: " + e.what();
  }
  return false;
}

/// The synchronous form of a call: parse, run on this thread, convert (failures throw a JS Error).
template <class Req, class Res, class Parse>
Napi::Value call_sync(const Napi::CallbackInfo& info, Parse&& parse, bool (*run)(const Req&, Res&, std::string&),
                      Napi::Object (*to_js)(Napi::Env, Res&)) {
  std::unique_ptr<Req> req = parse(info);
  Res res;
  std::string err;
  if (!run(*req, res, err)) throw Napi::Error::New(info.Env(), err);
  return to_js(info.Env(), res);
}

/// Runs `run(req, res, error)` on the libuv pool and settles a Promise with `to_js(env, res)`.
template <class Req, class Res>
class PromiseWorker : public Napi::AsyncWorker {
 public:
  using Run = bool (*)(const Req&, Res&, std::string&);
  using ToJs = Napi::Object (*)(Napi::Env, Res&);
  PromiseWorker(Napi::Env env, const char* name, std::unique_ptr<Req> req, Run run, ToJs to_js)
      : Napi::AsyncWorker(env, name), req_(std::move(req)), run_(run), to_js_(to_js), deferred_(Napi::Promise::Deferred::New(env)) {}

  /// Parses with `parse(info)`; bad arguments reject the Promise instead of throwing.
  template <class Parse>
  static Napi::Value queue(const Napi::CallbackInfo& info, const char* name, Parse&& parse, Run run, ToJs to_js) {
    std::unique_ptr<Req> req;
    try {
      req = parse(info);
    } catch (const Napi::Error& e) {
      auto d = Napi::Promise::Deferred::New(info.Env());
      d.Reject(e.Value());
      return d.Promise();
    }
    auto* w = new PromiseWorker(info.Env(), name, std::move(req), run, to_js);
    Napi::Promise p = w->deferred_.Promise();
    w->Queue();
    return p;
  }

  void Execute() override {
    std::string err;
    if (!run_(*req_, res_, err)) SetError(err);
  }
  void OnOK() override { deferred_.Resolve(to_js_(Env(), res_)); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  std::unique_ptr<Req> req_;
  Res res_;
  Run run_;
  ToJs to_js_;
  Napi::Promise::Deferred deferred_;
};

}  // namespace egogeo::napi
