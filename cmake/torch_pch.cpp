// The source of devshim_torch_pch (CMakeLists.txt): a target that exists to build the precompiled
// <torch/torch.h> that the LibTorch test programs reuse. Nothing to compile here.
