package runner

// LearnWindow teaches a runner a model's window, as a provider's
// context_length_exceeded answer does.
var LearnWindow = (*Runner).learnWindow
