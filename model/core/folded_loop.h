// FoldedLoop: the guard of a loop its own work may call again — a port that answers at once
// calls back into the loop that called it (a completion frees a slot, a record is done). The
// inner call is folded into the running loop as one more pass instead of recursing, which could
// go as deep as the work is long.
#pragma once

namespace relaysim {

class FoldedLoop {
 public:
  // Outside a pass: runs `pass` until one ends with no call folded into it, and returns true.
  // Inside one: only notes that another pass is wanted, and returns false.
  template <class Pass>
  bool run(Pass&& pass) {
    if (running_) {
      again_ = true;
      return false;
    }
    struct Running {
      bool& flag;
      ~Running() { flag = false; }  // a pass that throws leaves the loop callable again
    } running{running_};
    running_ = true;
    do {
      again_ = false;
      pass();
    } while (again_);
    return true;
  }
  // Inside a pass: a call now would be folded in.
  bool running() const { return running_; }

 private:
  bool running_ = false;
  bool again_ = false;
};

}  // namespace relaysim
