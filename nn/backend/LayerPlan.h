#pragma once
// Layer plans: how a backend runs adjacent layers together without the network or the layers
// knowing.
//
// MultiLayerNetwork::init() describes its layers to its backend once (LayerDescription: what each
// layer computes, its parameter views, which layers read its output) and asks it for a plan
// (Backend::planSteps). A plan is a list of steps, each a run of adjacent layers the backend
// recognises and computes its own way, behind the same forward/backward contract as one layer
// (NetworkStep). The network fills every layer no planned step covers with a step of its own
// (SingleLayerStep) and from then on runs the steps in order, forward, and in reverse, backward:
// it never learns what was fused or how. A backend that plans nothing (the default, and CUDA's)
// runs every layer by itself.
//
// Why a plan rather than fused ops in Backend: a fused pair such as the CPU backend's convolution
// + MAX pooling (cpu/ConvolutionPoolingStep.h) is only valid when nothing else reads the
// intermediate output and the activation between them is one the step knows. As Backend ops, such
// pairs would be carried by every backend and decorator, recognised by the network, and their
// layers would expose their internals to each other; as a step, the one backend that fuses owns it
// all.
//
// What a step must and may do:
//  - it must compute the same numbers as its layers one by one (tests compare them bit for bit);
//  - it may leave the outputs and output gradients of the layers inside its span unwritten (the
//    plan checked that no one else reads them). The network still sizes those buffers, so a step
//    whose kernel does not apply to a shape can fall back to the layers' ops through them;
//  - it may skip whatever only feeds its input gradient when it is given none to write (the
//    network's first step, unless an input gradient is asked for): the CPU's fused first
//    convolution then takes its weight gradient straight from the pooled gradient;
//  - it must run its own kernels through Backend::runPlanned, so that an observer (the
//    profiler's) sees them as ops, and say which layer the ops that follow belong to
//    (enterLayer), as the network does for a single layer.
#include <type_traits>
#include <vector>

#include "nn/backend/ForwardContext.h"
#include "nn/backend/OpTypes.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class DeviceContext;

// What a backend sees of one layer when it plans. A layer describes what it computes
// (layers::RuntimeLayer::describe()); the network adds who reads its output.
struct LayerDescription {
  // The kinds some backend recognises; every other layer (a user's included) is OTHER and runs by
  // itself.
  // ACTIVATION: a layer that applies `activation` to its input element-wise and nothing else
  // (ActivationLayer).
  enum class Kind { CONVOLUTION, POOLING, ACTIVATION, OTHER };
  // `readers` entry for the network itself (the loss, output()).
  static constexpr int kNetwork = -1;

  Kind kind = Kind::OTHER;
  WindowGeometry geometry;                               // CONVOLUTION, POOLING
  PoolingKind pooling = PoolingKind::MAX;                // POOLING
  ActivationKind activation = ActivationKind::IDENTITY;  // CONVOLUTION: applied to its output;
                                                         // ACTIVATION: what it applies
  float alpha = 0;                                       // LEAKYRELU's negative slope
  // CONVOLUTION: views into the network's flat parameters and gradients (b, db empty without
  // bias), in the layouts Backend's convolution ops take.
  Tensor w, b, dw, db;
  // Layers whose forward pass reads this layer's output (kNetwork: the network).
  std::vector<int> readers;
};

// The current batch's tensors of every layer of the network, indexed by layer: inputs[i] is layer
// i's input (a view of outputs[i - 1], or the features), outputs[i] its output and gradients[i]
// dL/d outputs[i]. A step reads and writes those of its own span.
struct LayerTensors {
  std::vector<Tensor>& inputs;
  std::vector<Tensor>& outputs;
  std::vector<Tensor>& gradients;
};

// One step of a network's passes: layers [first(), last()].
class NetworkStep {
 public:
  NetworkStep(int first, int count) : first_(first), count_(count) {}
  virtual ~NetworkStep() = default;
  NetworkStep(const NetworkStep&) = delete;
  NetworkStep& operator=(const NetworkStep&) = delete;

  int first() const { return first_; }
  int count() const { return count_; }
  int last() const { return first_ + count_ - 1; }

  // Writes outputs[last()] from inputs[first()]. `pass` is the forward pass's context; layer i
  // of the span gets pass.forLayer(i) (layers::RuntimeLayer::forward).
  virtual void forward(DeviceContext& ctx, const LayerTensors& t, const ForwardContext& pass) = 0;
  // From gradients[last()] (for the network's output layer already with respect to its
  // pre-activation, as the loss writes it): overwrites the gradient views of every layer in the
  // span and, when `inputGradient` is not null, writes dL/d inputs[first()] into it. Follows a
  // training-mode forward() on the same tensors.
  virtual void backward(DeviceContext& ctx, const LayerTensors& t, Tensor* inputGradient) = 0;

 protected:
  // Charges the ops that follow to `layer` when the context has a profiler.
  static void enterLayer(DeviceContext& ctx, int layer);

 private:
  int first_, count_;
};

// A non-owning reference to a callable, valid during the call it is passed to: how
// Backend::runPlanned takes a planned step's kernel (a lambda), without the allocation a
// std::function may make (steps run in the training loop, which allocates nothing).
class KernelRef {
 public:
  // Implicit from any callable, by design (runPlanned(..., [&] { ... })); the constraint keeps
  // KernelRef's own copy and move constructors, which clang-tidy 14 does not see.
  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, KernelRef>)
      KernelRef(  // NOLINT(bugprone-forwarding-reference-overload,google-explicit-constructor)
          F&& f)
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o) { (*static_cast<std::remove_reference_t<F>*>(o))(); }) {}

  void operator()() const { call_(object_); }

 private:
  void* object_;
  void (*call_)(void*);
};

}  // namespace dl4cpp
