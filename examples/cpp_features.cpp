// Parlot example: C++20 language features under -finstrument-functions.
//
// Usage: cpp_features [iterations]     (default: 12)
//
// Exercises, in every iteration:
//   * nested namespaces (parlot_examples::geometry, ::containers, ::algo, ::errors);
//   * an abstract base class (geometry::Shape) with virtual methods, overridden by
//     three classes and called through base pointers;
//   * a class template (containers::RingBuffer<T>) and a constrained function
//     template (algo::weighted_sum<T>), each instantiated with int and double;
//   * operator overloading (geometry::Vec2: +, -, * and ==; RingBuffer::operator[]);
//   * a capturing lambda passed to a function template;
//   * exceptions: on every 8th iteration (i % 8 == 3) errors::level3, three
//     calls below main, throws errors::ValidationError (derived from
//     std::runtime_error); errors::level1 catches it, records it and rethrows
//     with `throw;`; main catches it. level2 and level3 hold RAII
//     errors::Resource objects whose destructors run during unwinding and call
//     the instrumented function errors::release.
//
// Single-threaded and deterministic: the call sequence depends only on the
// argument.
//
// The file deliberately uses no std::string: clang 14 with libstdc++ 12 in
// C++20 mode and -finstrument-functions leaves undefined references to
// std::allocator<char>::allocate/deallocate (llvm-project issue #50742).
//
// Output (one line):
//   cpp_features iterations=<n> caught=<c> rethrown=<r> released=<k> ledger=<hex> value=<float>

#include <cerrno>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace parlot_examples {

namespace geometry {

struct Vec2 {
  double x = 0.0;
  double y = 0.0;

  Vec2 operator+(const Vec2& o) const { return {x + o.x, y + o.y}; }
  Vec2 operator-(const Vec2& o) const { return {x - o.x, y - o.y}; }
  Vec2 operator*(double s) const { return {x * s, y * s}; }
  bool operator==(const Vec2& o) const = default;
  double dot(const Vec2& o) const { return x * o.x + y * o.y; }
  double cross(const Vec2& o) const { return x * o.y - y * o.x; }
  double length() const;
};

double Vec2::length() const {
  // Newton iterations instead of sqrt keep the call sequence identical on
  // every libm; 12 steps are plenty for the values used here.
  double s = dot(*this);
  if (s == 0.0) return 0.0;
  double r = s > 1.0 ? s : 1.0;
  for (int i = 0; i < 12; ++i) r = 0.5 * (r + s / r);
  return r;
}

class Shape {
 public:
  explicit Shape(Vec2 origin) : origin_(origin) {}
  virtual ~Shape() = default;
  Shape(const Shape&) = delete;
  Shape& operator=(const Shape&) = delete;

  virtual double area() const = 0;
  virtual double perimeter() const = 0;
  virtual const char* name() const = 0;
  // Non-virtual interface method that dispatches to the virtual ones.
  double score() const { return area() + 0.5 * perimeter() + origin_.dot({1.0, 1.0}); }
  void move_by(const Vec2& d) { origin_ = origin_ + d; }
  const Vec2& origin() const { return origin_; }

 private:
  Vec2 origin_;
};

class Circle final : public Shape {
 public:
  Circle(Vec2 origin, double radius) : Shape(origin), radius_(radius) {}
  double area() const override { return kPi * radius_ * radius_; }
  double perimeter() const override { return 2.0 * kPi * radius_; }
  const char* name() const override { return "circle"; }

 private:
  static constexpr double kPi = 3.14159265358979323846;
  double radius_;
};

class Rectangle final : public Shape {
 public:
  Rectangle(Vec2 origin, double w, double h) : Shape(origin), w_(w), h_(h) {}
  double area() const override { return w_ * h_; }
  double perimeter() const override { return 2.0 * (w_ + h_); }
  const char* name() const override { return "rectangle"; }

 private:
  double w_;
  double h_;
};

class Triangle final : public Shape {
 public:
  Triangle(Vec2 a, Vec2 b, Vec2 c) : Shape(a), b_(b), c_(c) {}
  double area() const override {
    double twice = (b_ - origin()).cross(c_ - origin());
    return 0.5 * (twice < 0 ? -twice : twice);
  }
  double perimeter() const override {
    return (b_ - origin()).length() + (c_ - b_).length() + (origin() - c_).length();
  }
  const char* name() const override { return "triangle"; }

 private:
  Vec2 b_;
  Vec2 c_;
};

}  // namespace geometry

namespace containers {

// Fixed-capacity ring buffer; push overwrites the oldest element when full.
template <typename T>
class RingBuffer {
 public:
  explicit RingBuffer(std::size_t capacity) : data_(capacity) {}

  void push(const T& v) {
    data_[(head_ + size_) % data_.size()] = v;
    if (size_ < data_.size()) {
      ++size_;
    } else {
      head_ = (head_ + 1) % data_.size();
    }
  }
  T pop() {
    if (size_ == 0) throw std::out_of_range("RingBuffer::pop on empty buffer");
    T v = data_[head_];
    head_ = (head_ + 1) % data_.size();
    --size_;
    return v;
  }
  // i-th oldest element.
  const T& operator[](std::size_t i) const { return data_[(head_ + i) % data_.size()]; }
  std::size_t size() const { return size_; }

 private:
  std::vector<T> data_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace containers

namespace algo {

template <typename T>
concept Arithmetic = std::is_arithmetic_v<T>;

// Sum of values[i] * (i + 1).
template <Arithmetic T>
T weighted_sum(std::span<const T> values) {
  T sum{};
  for (std::size_t i = 0; i < values.size(); ++i) sum += values[i] * static_cast<T>(i + 1);
  return sum;
}

template <typename Container, typename Fn>
void for_each_item(const Container& items, Fn&& fn) {
  for (const auto& item : items) fn(*item);
}

}  // namespace algo

namespace errors {

class ValidationError : public std::runtime_error {
 public:
  ValidationError(const char* what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

struct Ledger {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a offset basis
  long acquired = 0;
  long released = 0;
  long caught_in_level1 = 0;
};

Ledger g_ledger;

void mix(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    g_ledger.hash ^= (v >> (8 * i)) & 0xffu;
    g_ledger.hash *= 0x100000001b3ULL;  // FNV-1a prime
  }
}

void acquire(int tag, int id) {
  ++g_ledger.acquired;
  mix(static_cast<std::uint64_t>(tag) * 1000003u + static_cast<std::uint64_t>(id));
}

void release(int tag, int id) {
  ++g_ledger.released;
  mix(~(static_cast<std::uint64_t>(tag) * 1000003u + static_cast<std::uint64_t>(id)));
}

// RAII handle: the constructor and the (non-trivial) destructor both call
// instrumented functions, also when the destructor runs during unwinding.
class Resource {
 public:
  Resource(int tag, int id) : tag_(tag), id_(id) { acquire(tag_, id_); }
  ~Resource() { release(tag_, id_); }
  Resource(const Resource&) = delete;
  Resource& operator=(const Resource&) = delete;

 private:
  int tag_;
  int id_;
};

int level3(int i) {
  Resource r(3, i);
  if (i % 8 == 3) {
    char message[64];
    std::snprintf(message, sizeof message, "level3 rejected iteration %d", i);
    throw ValidationError(message, i);
  }
  return i % 7;
}

int level2(int i) {
  Resource r(2, i);
  return level3(i) + 1;
}

int level1(int i) {
  try {
    return level2(i) * 2;
  } catch (const ValidationError& e) {
    ++g_ledger.caught_in_level1;
    mix(static_cast<std::uint64_t>(e.code()));
    throw;  // rethrow the same exception object to main
  }
}

}  // namespace errors

}  // namespace parlot_examples

namespace pe = parlot_examples;

namespace {

std::vector<std::unique_ptr<pe::geometry::Shape>> make_shapes() {
  using namespace pe::geometry;
  std::vector<std::unique_ptr<Shape>> shapes;
  shapes.push_back(std::make_unique<Circle>(Vec2{0.0, 0.0}, 1.5));
  shapes.push_back(std::make_unique<Rectangle>(Vec2{1.0, 2.0}, 3.0, 4.0));
  shapes.push_back(std::make_unique<Triangle>(Vec2{0.0, 0.0}, Vec2{4.0, 0.0}, Vec2{0.0, 3.0}));
  shapes.push_back(std::make_unique<Circle>(Vec2{-1.0, 2.0}, 0.5));
  return shapes;
}

// One iteration of non-exceptional work. Returns a value folded into the result.
double run_iteration(int i, std::vector<std::unique_ptr<pe::geometry::Shape>>& shapes,
                     pe::containers::RingBuffer<int>& ints,
                     pe::containers::RingBuffer<double>& doubles) {
  using pe::geometry::Vec2;

  // Virtual dispatch through the abstract base, driven by a capturing lambda.
  double total = 0.0;
  int visited = 0;
  pe::algo::for_each_item(shapes, [&total, &visited](const pe::geometry::Shape& s) {
    total += s.score();
    visited += s.name()[0] == 'c' ? 1 : 0;
  });

  // Operator overloading.
  Vec2 step = Vec2{0.25, -0.125} * static_cast<double>(i % 5);
  Vec2 back = Vec2{0.0, 0.0} - step;
  shapes[static_cast<std::size_t>(i) % shapes.size()]->move_by(step);
  shapes[static_cast<std::size_t>(i) % shapes.size()]->move_by(back);
  if (!(step + back == Vec2{0.0, 0.0})) total += 1.0;

  // Class template and function template, each with int and double.
  ints.push(i % 97 + visited);
  doubles.push(total / 16.0);
  int ints_sum = 0;
  double doubles_sum = 0.0;
  for (std::size_t k = 0; k < ints.size(); ++k) {
    ints_sum += ints[k];
    doubles_sum += doubles[k];
  }
  if (ints.size() == 8) {
    ints.pop();
    doubles.pop();
  }
  const int iv[4] = {ints_sum, i % 11, 3, visited};
  const double dv[4] = {doubles_sum, 0.5, total, 1.25};
  int wi = pe::algo::weighted_sum<int>(iv);
  double wd = pe::algo::weighted_sum<double>(dv);
  return static_cast<double>(wi % 1000) + wd * 1e-3;
}

bool parse_iterations(const char* text, long* out) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 1 || v > 2000000000L) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 12;
  if (argc > 2 || (argc == 2 && !parse_iterations(argv[1], &iterations))) {
    std::fprintf(stderr, "usage: cpp_features [iterations]   (iterations: 1..2000000000)\n");
    return 2;
  }

  auto shapes = make_shapes();
  pe::containers::RingBuffer<int> ints(8);
  pe::containers::RingBuffer<double> doubles(8);
  double value = 0.0;
  long caught = 0;
  long chain = 0;

  for (long it = 0; it < iterations; ++it) {
    int i = static_cast<int>(it);
    value += run_iteration(i, shapes, ints, doubles);
    try {
      chain += pe::errors::level1(i);
    } catch (const pe::errors::ValidationError& e) {
      ++caught;
      chain += e.code() % 5;
    }
    // Keep the accumulator bounded so its printed form stays short.
    if (value > 1e6) value -= 1e6;
  }

  const auto& ledger = pe::errors::g_ledger;
  std::printf(
      "cpp_features iterations=%ld caught=%ld rethrown=%ld released=%ld ledger=%016llx "
      "chain=%ld value=%.6f\n",
      iterations, caught, ledger.caught_in_level1, ledger.released,
      static_cast<unsigned long long>(ledger.hash), chain, value);
  return ledger.acquired == ledger.released && caught == ledger.caught_in_level1 ? 0 : 1;
}
