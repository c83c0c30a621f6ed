// Shared N-API plumbing for the engine's bindings (vo/binding.cc, render/binding.cc): argument
// readers that throw a JS TypeError naming the function and field, a guard that turns any C++
// failure into a message, and a Promise-returning call on the load's own threads (work_pool.h).
// Header-only, no state.
#pragma once

#include "work_pool.h"

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

/// One option as `OptionReader` read it: the table an options object is checked against (unknown
/// keys are errors) and that the addon exports (`optionTable()`), so the JS side can be held equal.
struct OptionInfo {
  std::string name;
  std::string kind;  // "number", "integer", "boolean", "choice", or what the caller reads itself
  double dflt = std::numeric_limits<double>::quiet_NaN();  // number / integer / boolean (0 or 1)
  std::string dflt_choice;                                  // choice
  bool has_default = false;
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;
};

/// Reads one options object through `Args`, recording every key it is asked for: the reads are the
/// option table (one place for names, kinds, defaults and ranges), and `reject_unknown` refuses any
/// other key with one line naming it.
class OptionReader {
 public:
  OptionReader(const Args& a, Napi::Object o, std::string where) : a_(a), o_(std::move(o)), where_(std::move(where)) {}
  const Args& args() const { return a_; }

  double number(const char* key, double dflt, double lo, double hi) {
    OptionInfo& i = add(key, "number");
    i.dflt = dflt, i.has_default = true, i.lo = lo, i.hi = hi;
    return a_.number(o_, key, where_, dflt, lo, hi);
  }
  int integer(const char* key, int dflt, int lo, int hi) {
    OptionInfo& i = add(key, "integer");
    i.dflt = dflt, i.has_default = true, i.lo = lo, i.hi = hi;
    return a_.integer(o_, key, where_, dflt, lo, hi);
  }
  bool boolean(const char* key, bool dflt) {
    OptionInfo& i = add(key, "boolean");
    i.dflt = dflt ? 1 : 0, i.has_default = true;
    return a_.boolean(o_, key, where_, dflt);
  }
  std::string choice(const char* key, const std::string& dflt, std::initializer_list<const char*> allowed) {
    OptionInfo& i = add(key, "choice");
    i.dflt_choice = dflt, i.has_default = true;
    for (const char* c : allowed) i.choices.emplace_back(c);
    return a_.choice(o_, key, where_, dflt, allowed);
  }
  /// A value the caller validates itself (`kind` names what it must be, for the table).
  Napi::Value raw(const char* key, const char* kind) {
    add(key, kind);
    return o_.Get(key);
  }

  void reject_unknown() const {
    Napi::Array keys = o_.GetPropertyNames();
    for (uint32_t k = 0; k < keys.Length(); ++k) {
      const std::string key = keys.Get(k).ToString().Utf8Value();
      bool ok = false;
      for (const OptionInfo& i : table_) ok = ok || i.name == key;
      if (!ok) a_.fail("unknown option " + where_ + "." + key + " (see optionTable() for the " + std::to_string(table_.size()) + " options)");
    }
  }

  const std::vector<OptionInfo>& table() const { return table_; }

  /// The table as JS: [{name, kind, default?, min?, max?, choices?}] in reading order.
  static Napi::Array to_js(Napi::Env env, const std::vector<OptionInfo>& table) {
    Napi::Array out = Napi::Array::New(env, table.size());
    for (size_t k = 0; k < table.size(); ++k) {
      const OptionInfo& i = table[k];
      Napi::Object o = Napi::Object::New(env);
      o.Set("name", i.name);
      o.Set("kind", i.kind);
      if (i.kind == "choice") {
        o.Set("default", i.dflt_choice);
        Napi::Array c = Napi::Array::New(env, i.choices.size());
        for (size_t j = 0; j < i.choices.size(); ++j) c.Set(static_cast<uint32_t>(j), i.choices[j]);
        o.Set("choices", c);
      } else if (i.kind == "boolean") {
        o.Set("default", i.dflt != 0);
      } else if (i.has_default) {
        o.Set("default", i.dflt);
        if (std::isfinite(i.lo)) o.Set("min", i.lo);
        if (std::isfinite(i.hi)) o.Set("max", i.hi);
      }
      out.Set(static_cast<uint32_t>(k), o);
    }
    return out;
  }

 private:
  OptionInfo& add(const char* key, const char* kind) {
    table_.push_back(OptionInfo{});
    table_.back().name = key;
    table_.back().kind = kind;
    return table_.back();
  }
  const Args& a_;
  Napi::Object o_;
  std::string where_;
  std::vector<OptionInfo> table_;
};

/// Why a call failed: one line "fn: message", and whether it was the engine's own failure (an
/// OpenCV assertion, a logic error: a bug) rather than bad input. JS sees it as an Error with
/// `code` 'EGOGEO_INTERNAL' or 'EGOGEO_INPUT' (src/core/errors.ts), so a run stops on the former
/// and fails only the clip on the latter.
struct Failure {
  std::string message;
  bool internal = false;

  Napi::Error to_js(Napi::Env env) const {
    Napi::Error e = Napi::Error::New(env, message);
    e.Set("code", Napi::String::New(env, internal ? "EGOGEO_INTERNAL" : "EGOGEO_INPUT"));
    return e;
  }
};

/// Runs `work`, turning every C++ failure into a Failure (nothing escapes into N-API).
/// `InputErrorT` is the engine's error for bad input, reported without a category; running out of
/// memory is the input's too (a clip too large for this machine), anything else is internal.
template <class InputErrorT, class F>
bool guarded(const char* fn, F&& work, Failure& error) {
  try {
    work();
    return true;
  } catch (const InputErrorT& e) {
    error = {std::string(fn) + ": " + e.what(), false};
  } catch (const cv::Exception& e) {
    error = {std::string(fn) + ": OpenCV error: " + e.err, true};
  } catch (const std::bad_alloc&) {
    error = {std::string(fn) + ": out of memory", false};
  } catch (const std::exception& e) {
    error = {std::string(fn) + ": internal error: " + e.what(), true};
  }
  return false;
}

/// The synchronous form of a call: parse, run on this thread, convert (failures throw a JS Error).
template <class Req, class Res, class Parse>
Napi::Value call_sync(const Napi::CallbackInfo& info, Parse&& parse, bool (*run)(const Req&, Res&, Failure&),
                      Napi::Object (*to_js)(Napi::Env, Res&)) {
  std::unique_ptr<Req> req = parse(info);
  Res res;
  Failure err;
  if (!run(*req, res, err)) throw err.to_js(info.Env());
  return to_js(info.Env(), res);
}

/// One async call in flight: its request, result, and the Promise it settles.
template <class Req, class Res>
struct AsyncCall {
  using Run = bool (*)(const Req&, Res&, Failure&);
  using ToJs = Napi::Object (*)(Napi::Env, Res&);
  std::unique_ptr<Req> req;
  Napi::Promise::Deferred deferred;
  Run run;
  ToJs to_js;
  Res res{};
  Failure failure{};
  bool ok = false;
};

/// Settles an AsyncCall on the JS thread (a thread-safe function's call_js); with a null env while
/// the environment tears down, when it only frees the call. Nothing is thrown out of it.
template <class Req, class Res>
void settle_call(napi_env raw_env, napi_value, void*, void* data) {
  std::unique_ptr<AsyncCall<Req, Res>> c(static_cast<AsyncCall<Req, Res>*>(data));
  if (raw_env == nullptr) return;
  Napi::Env env(raw_env);
  Napi::HandleScope scope(env);
  try {
    if (!c->ok)
      c->deferred.Reject(c->failure.to_js(env).Value());
    else
      c->deferred.Resolve(c->to_js(env, c->res));
  } catch (const Napi::Error& e) {
    c->deferred.Reject(e.Value());
  } catch (const std::exception& e) {
    c->deferred.Reject(Napi::Error::New(env, e.what()).Value());
  }
}

/// Runs `run(req, res, error)` on `pool` (work_pool.h: this load's threads) and settles a Promise
/// with `to_js(env, res)` on the JS thread, through a thread-safe function made for the call (it
/// keeps the event loop alive until the call settles, as an AsyncWorker would). Bad arguments
/// reject the Promise instead of throwing.
template <class Req, class Res, class Parse>
Napi::Value queue_call(const Napi::CallbackInfo& info, WorkPool& pool, const char* name, Parse&& parse,
                       bool (*run)(const Req&, Res&, Failure&), Napi::Object (*to_js)(Napi::Env, Res&)) {
  using Call = AsyncCall<Req, Res>;
  Napi::Env env = info.Env();
  auto deferred = Napi::Promise::Deferred::New(env);
  Napi::Promise promise = deferred.Promise();
  std::unique_ptr<Req> req;
  try {
    req = parse(info);
  } catch (const Napi::Error& e) {
    deferred.Reject(e.Value());
    return promise;
  }
  auto call = std::make_unique<Call>(Call{std::move(req), deferred, run, to_js});
  napi_threadsafe_function tsfn = nullptr;
  // The C API, not Napi::TypedThreadSafeFunction: its compile-time callback check does not compile
  // under GCC's sanitizer build.
  if (napi_create_threadsafe_function(env, nullptr, nullptr, Napi::String::New(env, name), 0, 1, nullptr, nullptr, nullptr,
                                      settle_call<Req, Res>, &tsfn) != napi_ok)
    throw Napi::Error::New(env, std::string(name) + ": could not create a thread-safe function");
  Call* c = call.release();
  pool.submit(WorkPool::Job{
      [c] { c->ok = c->run(*c->req, c->res, c->failure); },
      [c, tsfn] {
        // napi_closing: the environment is going away and the function with it (no release then).
        if (napi_call_threadsafe_function(tsfn, c, napi_tsfn_nonblocking) == napi_ok)
          napi_release_threadsafe_function(tsfn, napi_tsfn_release);
        else
          delete c;
      }});
  return promise;
}

}  // namespace egogeo::napi
