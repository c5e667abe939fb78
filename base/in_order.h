// Making items on worker threads and using them in order on the calling thread.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace devshim {

/// Calls use(make(0)), use(make(1)), ..., use(make(count - 1)) in that order on the calling
/// thread, while up to `workers` threads run make ahead of it, at most `window` items ahead of the
/// one being used (so memory holds at most `window` made items). make must be safe to call from
/// several threads at once. An exception from make(i) is thrown on the calling thread where
/// use(i) would have been called; one from use stops the workers. Either way the workers are
/// joined before it leaves. With workers == 0 everything runs on the calling thread.
template <typename T, typename Make, typename Use>
void make_in_parallel_use_in_order(std::size_t count, unsigned workers, std::size_t window,
                                   Make make, Use use) {
  if (workers == 0 || count < 2) {
    for (std::size_t i = 0; i < count; ++i) use(make(i));
    return;
  }
  if (window < 1) window = 1;
  struct Slot {  // made when it holds a value or an error
    std::optional<T> value;
    std::exception_ptr error;
  };
  std::vector<Slot> slots(window);
  std::mutex mutex;
  // Each side is woken only when it waits, and the workers only once a quarter of the window
  // (at least one slot) is free again or the user waits for an item not made yet: a wake-up
  // per item costs a futex call on both threads, a tenth of an import's time.
  std::condition_variable room;   // workers wait for a free slot
  std::condition_variable ready;  // the user waits for its item
  std::size_t next = 0;           // the next index a worker makes
  std::size_t used = 0;           // indexes below it are used (their slots free)
  std::size_t workers_waiting = 0;
  std::size_t wanted = count;  // the index the user waits for; count: none
  bool stop = false;
  const std::size_t batch = std::max<std::size_t>(1, window / 4);

  auto work = [&] {
    while (true) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex);
        const auto can_make = [&] { return stop || next >= count || next < used + window; };
        if (!can_make()) {
          ++workers_waiting;
          room.wait(lock, can_make);
          --workers_waiting;
        }
        if (stop || next >= count) return;
        i = next++;
      }
      Slot made;
      try {
        made.value.emplace(make(i));
      } catch (...) {
        made.error = std::current_exception();
      }
      bool wake_user = false;
      {
        std::lock_guard lock(mutex);
        slots[i % window] = std::move(made);
        wake_user = wanted == i;
      }
      if (wake_user) ready.notify_one();
    }
  };
  std::vector<std::jthread> pool;
  // Declared after pool, so destroyed before it: the workers are told to stop, then joined.
  struct Stop {
    std::mutex& mutex;
    std::condition_variable& room;
    bool& stop;
    ~Stop() {
      {
        std::lock_guard lock(mutex);
        stop = true;
      }
      room.notify_all();
    }
  } stop_workers{mutex, room, stop};
  pool.reserve(workers);
  for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work);

  for (std::size_t i = 0; i < count; ++i) {
    Slot item;
    bool wake_workers = false;
    {
      std::unique_lock lock(mutex);
      Slot& slot = slots[i % window];
      if (!slot.value && !slot.error) {
        if (workers_waiting > 0) room.notify_all();  // they may be waiting for a batch of room
        wanted = i;
        ready.wait(lock, [&] { return slot.value || slot.error; });
        wanted = count;
      }
      item = std::move(slot);
      slot = Slot{};
      ++used;
      wake_workers = workers_waiting > 0 && used + window - next >= batch;
    }
    if (wake_workers) room.notify_all();
    if (item.error) std::rethrow_exception(item.error);
    use(std::move(*item.value));
  }
}

}  // namespace devshim
